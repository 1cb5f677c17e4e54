package checkpoint

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// Checker says whether an agent can be read without recovering its
// state, which Read decodes in full: a reader of what lies beside the
// state (the event history) refuses an agent Read refuses, at the cost of
// a pass over its files rather than of its state in memory. FileStore,
// MemStore and pgstore implement it; a caller of a store that does not
// pays a Read.
type Checker interface {
	// Check returns nil when Read would read the agent, and Read's
	// error when it would not.
	Check(agent string) error
}

var _ Checker = (*FileStore)(nil)

// checkBuffer is the buffer Check reads an agent's files through.
const checkBuffer = 32 << 10

// Check says whether Read would read agent id, without decoding its
// state. It passes over the newest snapshot and its journal in a fixed
// buffer and finds them clean when every frame's checksum holds up to the
// file's end (a journal's reserved zeros aside), the headers are of a
// schema this build reads, the commits follow the snapshot's round one by
// one under the lock epochs Read accepts, no journal lacks its snapshot,
// and the files hold all the commit mark says was durable. Anything else
// (damage, a torn tail, a missing file, a group log to redo, a writer
// that moves the agent on meanwhile) is left to Read: Check then reads the
// agent and returns Read's error, word for word, or nil where Read reads
// it. So Check's memory does not grow with the state, while its reading
// does, and a refusal costs a Read.
//
// What Check does not decode, it does not judge: a frame whose checksum
// holds over a payload that does not decode, or a compaction that does
// not fit the conversation, passes Check and fails Read. Only a defective
// writer makes such a frame; damage to the bytes fails the checksum.
//
// # Errors
//
// ErrInvalidID for an id that cannot be an agent's; ErrNotFound for an
// unknown agent; otherwise Read's errors (a *CorruptError, an error
// matching ErrLost, a *FutureSchemaError).
func (s *FileStore) Check(id string) error {
	dir, err := s.agentDir(id)
	if err != nil {
		return err
	}
	if s.clean(id, dir) {
		return nil
	}
	_, err = s.Read(id)
	return err
}

// clean reports whether the agent in dir reads as Check describes. Its
// commit mark is read first, as Read reads it, so that what it claims is
// in the files read after it.
func (s *FileStore) clean(id, dir string) bool {
	mark, marked := decodeMark(readMarkBytes(dir))
	entries, err := groupEntries(filepath.Join(s.dir, "group"), id, s.markedDurable())
	if err != nil || len(entries) > 0 {
		return false
	}
	snaps, err := listRounds(dir, "snap-", ".cbor")
	if err != nil || len(snaps) == 0 {
		return false
	}
	base := snaps[len(snaps)-1]
	if !cleanSnapshot(filepath.Join(dir, snapName(base)), base) {
		return false
	}
	end, round, ok := cleanJournal(filepath.Join(dir, journalName(base)), base)
	if _, orphan := orphanJournal(dir, base); !ok || orphan {
		return false
	}
	return !marked || (mark.base < base || mark.base == base && end >= mark.journal) && round >= mark.round
}

// cleanSnapshot reports whether the snapshot file name is a header frame
// of this build's schema naming round and one state frame, whose
// checksums hold, and nothing after them.
func cleanSnapshot(name string, round int) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, checkBuffer)
	if h, ok := cleanHeader(r); !ok || h.Round != round {
		return false
	}
	if typ, _, err := nextFrame(r, false); err != nil || typ != RecState {
		return false
	}
	_, err = r.ReadByte()
	return err == io.EOF
}

// cleanJournal reads the journal that follows the snapshot of round base:
// end is where its last frame ends, round the boundary its commits reach.
// ok is false unless it is clean: no journal at all, or a header frame of
// this build's schema and frames whose checksums hold up to the file's end
// or to reserved zeros that run to it, each of a type a journal holds, its
// commits each the round after the one before and each under an epoch no
// later commit gave way from (replayData's checks).
func cleanJournal(name string, base int) (end int64, round int, ok bool) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return 0, base, true
	}
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, checkBuffer)
	if zeros, err := restIsZero(r); err != nil || zeros {
		return 0, base, err == nil
	}
	if _, ok := cleanHeader(r); !ok {
		return 0, 0, false
	}
	round = base
	var w writers
	for {
		if end, err = offsetOf(f, r); err != nil {
			return 0, 0, false
		}
		if zeros, err := restIsZero(r); err != nil || zeros {
			return end, round, err == nil
		}
		typ, payload, err := nextFrame(r, true)
		if err == io.EOF {
			return end, round, true
		}
		if err != nil || !journalType(typ) {
			return 0, 0, false
		}
		if typ != RecCommit {
			continue
		}
		rec, err := decodeRecord(typ, payload)
		if err != nil || rec.Round != round+1 || w.check(rec) != nil {
			return 0, 0, false
		}
		round = rec.Round
	}
}

// journalType reports whether a frame of type t is one replay applies.
func journalType(t RecordType) bool {
	switch t {
	case RecCommit, RecAbort, RecRunStarted, RecRunEnded, RecDefine, RecCompaction:
		return true
	}
	return t.roundScoped()
}

// cleanHeader reads a header frame at r's position and decodes it; ok is
// false unless it is one whose schema this build reads.
func cleanHeader(r *bufio.Reader) (Header, bool) {
	typ, payload, err := nextFrame(r, true)
	if err != nil || typ != RecHeader {
		return Header{}, false
	}
	h, err := checkHeader("", []frame{{typ: typ, payload: payload}})
	return h, err == nil
}

// errNotClean is any frame that is not whole with its checksum holding.
var errNotClean = errors.New("not a whole frame")

// nextFrame reads the frame at r's position, its payload through the
// checksum in pieces; with keep, the payload is returned too, and then
// only a payload of at most checkBuffer is read (a commit, a header).
// io.EOF at the end of r; errNotClean for anything but a whole frame whose
// checksum holds.
func nextFrame(r *bufio.Reader, keep bool) (RecordType, []byte, error) {
	var h [frameHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if err == io.EOF {
			return 0, nil, io.EOF
		}
		return 0, nil, errNotClean
	}
	n := int64(binary.LittleEndian.Uint32(h[0:4]))
	if n == 0 || n > maxRecordSize || keep && n > checkBuffer {
		return 0, nil, errNotClean
	}
	crc := crc32.Checksum(h[:5], castagnoli)
	var payload []byte
	if keep {
		payload = make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return 0, nil, errNotClean
		}
		crc = crc32.Update(crc, castagnoli, payload)
	} else {
		for n > 0 {
			b, err := r.Peek(int(min(n, checkBuffer)))
			if len(b) == 0 {
				return 0, nil, errors.Join(errNotClean, err)
			}
			crc = crc32.Update(crc, castagnoli, b)
			r.Discard(len(b))
			n -= int64(len(b))
		}
	}
	if crc != binary.LittleEndian.Uint32(h[5:9]) {
		return 0, nil, errNotClean
	}
	return RecordType(h[4]), payload, nil
}

// restIsZero reports, where r's next bytes are a zero frame length (or
// the zeros that are left of one), whether every byte from there to the
// end is zero, as a journal's reserved space is; it reads them, and an
// error says a byte was not. Where no zero length is next, or r is at its
// end, it reads nothing and reports false.
func restIsZero(r *bufio.Reader) (bool, error) {
	b, _ := r.Peek(4)
	if len(b) == 0 || !allZero(b) {
		return false, nil
	}
	for {
		b, err := r.Peek(checkBuffer)
		for _, c := range b {
			if c != 0 {
				return false, errNotClean
			}
		}
		r.Discard(len(b))
		if err == io.EOF {
			return true, nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return false, err
		}
	}
}

// offsetOf is the offset in f of r's next byte, r reading f from its start.
func offsetOf(f *os.File, r *bufio.Reader) (int64, error) {
	at, err := f.Seek(0, io.SeekCurrent)
	return at - int64(r.Buffered()), err
}

var _ Checker = (*MemStore)(nil)

// Check says whether Read would read agent id, without decoding its
// state: it reads the state's round from the bytes it starts with (see
// StateRound) and follows the journal's commits from it (see
// JournalCheck). Where either does not hold up, it reads the agent and
// returns Read's error, or nil where Read reads it.
func (s *MemStore) Check(id string) error {
	if s.clean(id) {
		return nil
	}
	_, err := s.Read(id)
	return err
}

// clean reports whether agent id reads as Check describes.
func (s *MemStore) clean(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[id]
	if !ok || a.snapshot == nil {
		return false
	}
	round, ok := StateRound(a.snapshot)
	if !ok {
		return false
	}
	c := NewJournalCheck(round)
	for i, b := range a.journal {
		if !c.Next(a.types[i], b) {
			return false
		}
	}
	return true
}

// StateRound is the round of an encoded state (EncodeState's bytes), read
// from the bytes it starts with, without decoding the rest: a state's
// schema, agent and round are the first entries of its map (keys 1, 2
// and 3, which its sorted encoding puts first), so its first 200 bytes
// hold them (an agent's id is at most 128). ok is false unless head
// starts a state of a schema this build reads and holds its round.
func StateRound(head []byte) (round int, ok bool) {
	major, _, b, ok := cborHead(head)
	if !ok || major != 5 { // a map
		return 0, false
	}
	for key := uint64(1); key <= 3; key++ {
		var k, v uint64
		if major, k, b, ok = cborHead(b); !ok || major != 0 || k != key {
			return 0, false
		}
		if major, v, b, ok = cborHead(b); !ok {
			return 0, false
		}
		switch {
		case key == 1 && major == 0 && v <= schemaVersion:
		case key == 2 && major == 3 && v <= uint64(len(b)): // the agent's id
			b = b[v:]
		case key == 3 && major == 0 && v <= 1<<31:
			round = int(v)
		default:
			return 0, false
		}
	}
	return round, true
}

// cborHead decodes the head of a CBOR data item: its major type, its
// argument (a length, or an unsigned integer's value) and the bytes after
// the head. ok is false for a head cut short or of an indefinite length.
func cborHead(b []byte) (major byte, arg uint64, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, 0, nil, false
	}
	major, info := b[0]>>5, b[0]&0x1f
	b = b[1:]
	if info < 24 {
		return major, uint64(info), b, true
	}
	if info > 27 {
		return 0, 0, nil, false
	}
	n := 1 << (info - 24)
	if len(b) < n {
		return 0, 0, nil, false
	}
	for _, c := range b[:n] {
		arg = arg<<8 | uint64(c)
	}
	return major, arg, b[n:], true
}

// JournalCheck follows, for a Checker of a store kept outside this
// package, the records of a journal after a snapshot, as Read replays
// them but without the state: each of a type a journal holds, each commit
// the round after the one before. Only commits are decoded.
type JournalCheck struct{ round int }

// NewJournalCheck starts at the snapshot's round (see StateRound).
func NewJournalCheck(round int) *JournalCheck { return &JournalCheck{round: round} }

// Next reports whether the record of type t with payload may follow
// those before it.
func (c *JournalCheck) Next(t RecordType, payload []byte) bool {
	if !journalType(t) {
		return false
	}
	if t != RecCommit {
		return true
	}
	rec, err := decodeRecord(t, payload)
	if err != nil || rec.Round != c.round+1 {
		return false
	}
	c.round = rec.Round
	return true
}

// Round is the boundary the commits so far reach.
func (c *JournalCheck) Round() int { return c.round }
