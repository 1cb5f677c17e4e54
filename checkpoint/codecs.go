package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// What a Store kept outside this package (checkpoint/pgstore, a user's own)
// needs to keep records and states in the same encoding as the file store,
// and to replay them the same way.

// EncodeRecord encodes a record's payload; the type travels beside it.
func EncodeRecord(rec Record) ([]byte, error) { return encodeRecord(rec) }

// DecodeRecord decodes the payload of a record of type t, refusing an
// unknown type and a record that lacks what its type needs.
func DecodeRecord(t RecordType, payload []byte) (Record, error) { return decodeRecord(t, payload) }

// EncodeState encodes a boundary state.
func EncodeState(st *State) ([]byte, error) { return encodeState(st) }

// DecodeState decodes a boundary state. A state of a newer schema is a
// *FutureSchemaError naming what, as where says it.
func DecodeState(where string, payload []byte) (*State, error) {
	st, err := decodeState(payload)
	if err != nil {
		return nil, &CorruptError{File: where, Reason: "state: " + err.Error()}
	}
	if st.Schema > schemaVersion {
		return nil, &FutureSchemaError{File: where, Version: st.Schema, Supported: schemaVersion}
	}
	return st, nil
}

// EncodeBookmark and DecodeBookmark encode a bookmark with its state;
// DecodeBookmark refuses one of a newer schema.
func EncodeBookmark(b Bookmark) ([]byte, error) {
	if err := CheckLabel(b.Label); err != nil {
		return nil, err
	}
	return encMode.Marshal(b)
}

// DecodeBookmark decodes a bookmark of agent kept by EncodeBookmark.
func DecodeBookmark(agent string, data []byte) (Bookmark, error) {
	var b Bookmark
	if err := decMode.Unmarshal(data, &b); err != nil {
		return b, &CorruptError{File: "bookmark of agent " + agent, Reason: err.Error()}
	}
	return b, b.check(agent)
}

// BlobDigest is the digest a blob is stored under: "sha256:" and the hex
// of its SHA-256.
func BlobDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Replay applies records to a boundary state as recovery does: round
// records wait for their round's Commit, an Abort drops them.
type Replay struct{ r replay }

// NewReplay starts from the boundary state st (which it changes) and the
// records of its interrupted round.
func NewReplay(st *State, tail []Record) *Replay {
	return &Replay{replay{st: st, pending: tail}}
}

// Add applies one record. A Commit out of order is an error.
func (r *Replay) Add(rec Record) error {
	if err := r.r.add(rec); err != nil {
		return fmt.Errorf("replay %s record: %w", rec.Type, err)
	}
	return nil
}

// State is the boundary state reached.
func (r *Replay) State() *State { return r.r.st }

// Tail is the records after the boundary: the round not yet committed.
func (r *Replay) Tail() []Record { return r.r.pending }

// Recovered is the state and tail as a Store's Read returns them.
func (r *Replay) Recovered() *Recovered { return &Recovered{State: r.r.st, Tail: r.r.pending} }

// NewSummary summarises an agent as List shows it: its recovered state,
// or the error reading it gave.
func NewSummary(id string, locked bool, r *Recovered, err error) Summary {
	s := Summary{ID: id, Locked: locked, Err: err}
	if err == nil {
		s.fill(r)
	}
	return s
}
