package filepool

import (
	"encoding/hex"
	"fmt"
)

// Hash is the sha256 of a file's content. CBOR encodes it as a 32-byte
// string; JSON and text as 64 hex digits.
type Hash [32]byte

func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText writes the hash as hex.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText reads 64 hex digits.
func (h *Hash) UnmarshalText(b []byte) error {
	if hex.DecodedLen(len(b)) != len(h) {
		return fmt.Errorf("hash %.70q: want %d hex digits", b, 2*len(h))
	}
	_, err := hex.Decode(h[:], b)
	return err
}

// Version is what a path held at one moment: nothing, or a regular file of
// Size bytes whose content hashes to Hash.
type Version struct {
	Exists bool
	Hash   Hash
	Size   int64
}

// Op is what the agent last did with a path.
type Op string

// The operations of an Entry.
const (
	OpRead   Op = "read"   // a tool read the file, or found it absent
	OpWrite  Op = "write"  // a call's effect created or replaced the file
	OpDelete Op = "delete" // a call's effect deleted the file
)

func (o Op) valid() bool { return o == OpRead || o == OpWrite || o == OpDelete }

// Entry is one tracked path and what the agent last saw there.
type Entry struct {
	Path   string `cbor:"1,keyasint"`
	Exists bool   `cbor:"2,keyasint,omitempty"`
	Hash   Hash   `cbor:"3,keyasint"`
	Size   int64  `cbor:"4,keyasint,omitempty"`
	// Round and Call name the round and the call that last read or wrote
	// the path; Op says which.
	Round int    `cbor:"5,keyasint,omitempty"`
	Call  string `cbor:"6,keyasint,omitempty"`
	Op    Op     `cbor:"7,keyasint"`
	// Outside says that the content recorded here was noticed after a
	// change outside the agent (Accept, Watcher.Drain), not seen by Call.
	Outside bool `cbor:"8,keyasint,omitempty"`
}

// Version is the content the entry records.
func (e Entry) Version() Version { return Version{Exists: e.Exists, Hash: e.Hash, Size: e.Size} }

// check cleans e's path and refuses an entry that contradicts itself.
func (e Entry) check() (Entry, error) {
	p, err := CleanPath(e.Path)
	if err != nil {
		return e, err
	}
	e.Path = p
	switch {
	case !e.Op.valid():
		return e, fmt.Errorf("entry %s: unknown op %q", p, e.Op)
	case e.Op == OpWrite && !e.Exists && !e.Outside:
		return e, fmt.Errorf("entry %s: a write must leave a file", p)
	case e.Op == OpDelete && e.Exists && !e.Outside:
		return e, fmt.Errorf("entry %s: a delete must leave no file", p)
	case e.Size < 0:
		return e, fmt.Errorf("entry %s: negative size", p)
	}
	if !e.Exists {
		e.Hash, e.Size = Hash{}, 0
	}
	return e, nil
}

// State is the pool's record: the value the host keeps in the loop
// checkpoint. Entries are sorted by path, one per path. Its zero value is an
// empty pool.
type State struct {
	Entries []Entry `cbor:"1,keyasint,omitempty"`
}
