package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// groupEntry is one append to an agent's journal, as a group log redoes
// it: data goes at off in the journal that follows the snapshot of round
// base whose CRC-32C is snap, and only after bytes whose CRC-32C is
// prefix.
type groupEntry struct {
	agent  string
	base   int
	snap   uint32
	off    int64
	prefix uint32
	data   []byte
}

func (e groupEntry) encode() []byte {
	return e.appendTo(make([]byte, 0, len(e.agent)+len(e.data)+24))
}

// appendTo appends the entry's payload to b.
func (e groupEntry) appendTo(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(e.agent)))
	b = append(b, e.agent...)
	b = binary.AppendUvarint(b, uint64(e.base))
	b = binary.LittleEndian.AppendUint32(b, e.snap)
	b = binary.AppendUvarint(b, uint64(e.off))
	b = binary.LittleEndian.AppendUint32(b, e.prefix)
	return append(b, e.data...)
}

// decodeGroupEntry decodes an entry's payload. The data aliases b.
func decodeGroupEntry(b []byte) (groupEntry, error) {
	var e groupEntry
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return e, errors.New("entry: bad agent id length")
	}
	e.agent, b = string(b[k:k+int(n)]), b[k+int(n):]
	if CheckID(e.agent) != nil {
		return e, fmt.Errorf("entry: bad agent id %q", e.agent)
	}
	base, k := binary.Uvarint(b)
	if k <= 0 || base > 1<<62 || len(b)-k < 4 {
		return e, errors.New("entry: bad round")
	}
	e.snap, b = binary.LittleEndian.Uint32(b[k:]), b[k+4:]
	off, k := binary.Uvarint(b)
	if k <= 0 || off > 1<<62 || len(b)-k <= 4 {
		return e, errors.New("entry: bad offset or no data")
	}
	e.base, e.off = int(base), int64(off)
	e.prefix = binary.LittleEndian.Uint32(b[k:])
	e.data = b[k+4:]
	return e, nil
}

// scanGroupLog calls fn with each entry of the group log in data, and
// returns when the log was made. durable says whether an entry is known
// to be durable (see groupFrames).
//
// # Errors
//
// A *CorruptError for damage that is not a torn tail or an entry that
// does not decode; a *FutureSchemaError for a log of a newer format.
func scanGroupLog(name string, data []byte, durable func(groupEntry) bool, fn func(groupEntry)) (uint64, error) {
	fr, err := groupFrames(name, data, durable)
	if err != nil || len(fr) == 0 {
		return 0, err // a log cut short before its header holds nothing
	}
	hdr, ok := bytes.CutPrefix(fr[0].payload, []byte(groupMagic))
	version, k := binary.Uvarint(hdr)
	if fr[0].typ != recGroupHeader || !ok || k <= 0 {
		return 0, &CorruptError{File: name, Reason: "no group log header"}
	}
	if version > groupVersion {
		return 0, &FutureSchemaError{File: name, Version: int(min(version, 1<<30)), Supported: groupVersion}
	}
	created, n := binary.Uvarint(hdr[k:])
	if n <= 0 || k+n != len(hdr) {
		return 0, &CorruptError{File: name, Reason: "group log header: bad time"}
	}
	return created, scanGroupEntries(name, fr[1:], fn)
}

// isGroupFrame counts the frames of a group log's own types: entries hold
// journal frames, which are no sign that anything follows damage.
func isGroupFrame(t RecordType) bool { return t == recGroupEntry || t == recGroupHeader }

// groupFrames splits a group log into frames up to its first damage,
// which is a torn tail unless it is known to lie in what was durable: in
// the header (synced when the log is made), or before an entry that
// durable says was (its agent's commit mark covers it). One batch at a
// time is written and synced with one fdatasync, so a power cut during
// that fdatasync may keep a later page of the batch and lose an earlier
// one; none of the batch's commits had returned, and no mark covers its
// entries. Damage known to be in what was durable is a *CorruptError.
func groupFrames(name string, data []byte, durable func(groupEntry) bool) ([]frame, error) {
	fr, end, why := split(data)
	if why == "" || allZero(data[end:]) || !validFrameAfter(data, end+1, isGroupFrame) {
		return fr, nil
	}
	if end == 0 {
		return nil, &CorruptError{File: name, Reason: why + ", in the header, which is synced when the log is made"}
	}
	var err error
	skip := int64(0) // the end of the last entry found: entries do not overlap
	framesFrom(data, end+1, func(f frame, next int64) bool {
		if f.off < skip || f.typ != recGroupEntry {
			return true
		}
		skip = next
		if e, derr := decodeGroupEntry(f.payload); derr == nil && durable(e) {
			err = &CorruptError{File: name, Offset: end, Reason: fmt.Sprintf(
				"%s, before an entry of agent %q at offset %d that its commit mark says was durable", why, e.agent, f.off)}
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return fr, nil
}

// markedDurable says whether a group log's entry is known to be durable:
// its agent's commit mark covers its bytes, or names a later snapshot, in
// the history the entry belongs to (the snapshot it follows is there with
// the checksum it names). A Commit returns, and its mark is written, only
// once its entries are synced, and with them every byte of the log before
// them.
func (s *FileStore) markedDurable() func(groupEntry) bool {
	type known struct {
		mark   commitMark
		marked bool
		snaps  map[int]uint32
	}
	agents := map[string]*known{}
	return func(e groupEntry) bool {
		dir := filepath.Join(s.dir, "agents", e.agent)
		k := agents[e.agent]
		if k == nil {
			k = &known{snaps: map[int]uint32{}}
			k.mark, k.marked = readMark(dir)
			agents[e.agent] = k
		}
		if !k.marked || k.mark.base < e.base || (k.mark.base == e.base && k.mark.journal < e.off+int64(len(e.data))) {
			return false
		}
		crc, ok := k.snaps[e.base]
		if !ok {
			snap, err := os.ReadFile(filepath.Join(dir, snapName(e.base)))
			if err != nil {
				return false
			}
			crc = crc32.Checksum(snap, castagnoli)
			k.snaps[e.base] = crc
		}
		return crc == e.snap
	}
}

func scanGroupEntries(name string, fr []frame, fn func(groupEntry)) error {
	for _, f := range fr {
		if f.typ != recGroupEntry {
			return &CorruptError{File: name, Offset: f.off, Reason: fmt.Sprintf("unexpected %s in a group log", f.typ)}
		}
		e, err := decodeGroupEntry(f.payload)
		if err != nil {
			return &CorruptError{File: name, Offset: f.off, Reason: err.Error()}
		}
		fn(e)
	}
	return nil
}

// groupLogNames lists the group logs in dir; temp files are not logs.
func groupLogNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") {
			names = append(names, filepath.Join(dir, e.Name()))
		}
	}
	return names, err
}

// groupEntries reads every group log in dir for the entries of agent, the
// logs in the order they were made and each in its own order; durable is
// as for scanGroupLog. A log that is gone by the time it is read was
// removed after the journals it redid were synced.
func groupEntries(dir, agent string, durable func(groupEntry) bool) ([]groupEntry, error) {
	names, err := groupLogNames(dir)
	if err != nil {
		return nil, err
	}
	type log struct {
		created uint64
		entries []groupEntry
	}
	var logs []log
	for _, name := range names {
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var l log
		l.created, err = scanGroupLog(name, data, durable, func(e groupEntry) {
			if e.agent == agent {
				l.entries = append(l.entries, e)
			}
		})
		if err != nil {
			return nil, err
		}
		logs = append(logs, l)
	}
	sort.SliceStable(logs, func(i, j int) bool { return logs[i].created < logs[j].created })
	var out []groupEntry
	for _, l := range logs {
		out = append(out, l.entries...)
	}
	return out, nil
}

// redo applies the entries of the journal that follows the snapshot of
// round base (whose checksum is snap) to the journal's bytes, in order of
// offset, later entries last, each only where the bytes before it have
// the checksum it names: an entry whose prefix was lost, or that belongs
// to another history of the agent, is not applied. It returns the journal
// and the range of bytes that redoing changed (from == to when none did).
func redo(data []byte, base int, snap uint32, entries []groupEntry) (out []byte, from, to int64) {
	var es []groupEntry
	for _, e := range entries {
		if e.base == base && e.snap == snap {
			es = append(es, e)
		}
	}
	sort.SliceStable(es, func(i, j int) bool { return es[i].off < es[j].off })
	out, from, to = data, -1, -1
	var pos int64
	var crc uint32
	for _, e := range es {
		if e.off > int64(len(out)) {
			continue
		}
		crc = crc32.Update(crc, castagnoli, out[pos:e.off])
		pos = e.off
		if crc != e.prefix {
			continue
		}
		end := e.off + int64(len(e.data))
		if end > int64(len(out)) {
			out = append(out, make([]byte, end-int64(len(out)))...)
		}
		if !bytes.Equal(out[e.off:end], e.data) {
			copy(out[e.off:end], e.data)
			if from < 0 {
				from = e.off
			}
			to = max(to, end)
		}
	}
	if from < 0 {
		return out, 0, 0
	}
	return out, from, to
}

// recoverAgent recovers an agent as recoverDir does, with every group
// log's entries for it redone over its journal first. With repair, the
// bytes redoing changed are written to the journal and synced, but only
// once everything has been read without error.
//
// markData is the agent's commit mark (readMarkBytes), read before
// anything else, so that what it says was durable is in the files read
// after it, even while another process appends; an agent whose files hold
// less is refused with a *lostError, before anything is written back.
func (s *FileStore) recoverAgent(id, dir string, markData []byte, repair bool) (*Recovered, error) {
	mark, marked := decodeMark(markData)
	entries, err := groupEntries(filepath.Join(s.dir, "group"), id, s.markedDurable())
	if err != nil {
		return nil, fmt.Errorf("read group logs for agent %q: %w", id, err)
	}
	if len(entries) == 0 {
		rec, base, err := recoverDir(id, dir, mark, marked)
		if err != nil {
			return nil, err
		}
		return rec, checkLost(id, dir, base, rec, mark, marked)
	}
	snaps, err := listRounds(dir, "snap-", ".cbor")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read agent %q: %w", id, err)
	}
	if len(snaps) == 0 {
		return nil, noSnapshot(id, dir, mark, marked)
	}
	base := snaps[len(snaps)-1]
	st, snapBytes, err := readSnapshot(dir, base)
	if err != nil {
		return nil, fmt.Errorf("read snapshot of agent %q: %w", id, err)
	}
	snap, err := os.ReadFile(filepath.Join(dir, snapName(base)))
	if err != nil {
		return nil, fmt.Errorf("read snapshot of agent %q: %w", id, err)
	}
	name := filepath.Join(dir, journalName(base))
	data, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read journal of agent %q: %w", id, err)
	}
	data, from, to := redo(data, base, crc32.Checksum(snap, castagnoli), entries)
	rec, err := replayData(name, data, st, mark.durable(base, marked))
	if err != nil {
		return nil, fmt.Errorf("read journal of agent %q: %w", id, err)
	}
	if err := checkLost(id, dir, base, rec, mark, marked); err != nil {
		return nil, err
	}
	if repair && from < to {
		if err := writeBack(name, data[from:to], from); err != nil {
			return nil, fmt.Errorf("redo journal of agent %q: %w", id, err)
		}
	}
	rec.SnapshotBytes = snapBytes
	return rec, nil
}

// replayData applies a journal's bytes, as replayJournal applies its file;
// its first durable bytes are known to be durable (see journalFrames).
func replayData(name string, data []byte, st *State, durable int64) (*Recovered, error) {
	fr, end, dropped, err := journalFrames(name, data, durable)
	if err != nil {
		return nil, err
	}
	if len(fr) == 0 {
		return &Recovered{State: st}, nil
	}
	if _, err := checkHeader(name, fr); err != nil {
		return nil, err
	}
	r := &replay{st: st}
	var w writers
	for _, f := range fr[1:] {
		rec, err := decodeRecord(f.typ, f.payload)
		if err == nil {
			err = w.check(rec)
		}
		if err == nil {
			err = r.add(rec)
		}
		if err != nil {
			return nil, &CorruptError{File: name, Offset: f.off, Reason: err.Error()}
		}
	}
	return &Recovered{State: st, Tail: r.pending, JournalBytes: end, dropped: dropped}, nil
}

// writeBack writes data at off in a journal and syncs it.
func writeBack(name string, data []byte, off int64) error {
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteAt(data, off)
	if werr == nil {
		werr = syncData(f)
	}
	return errors.Join(werr, f.Close())
}

// adoptGroupLogs redoes and removes the group logs no process holds: those
// of stores that were not closed. A log stays, and readers go on redoing
// from it, while an agent it redoes is locked by another process or cannot
// be read.
func (s *FileStore) adoptGroupLogs(dir string) {
	names, _ := groupLogNames(dir)
	for _, name := range names {
		s.adopt(dir, name)
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.log.tmp"))
	for _, tmp := range tmps {
		// A temp log never held an entry; one no one holds is left over.
		if f, err := os.Open(tmp); err == nil {
			if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
				os.Remove(tmp)
			}
			f.Close()
		}
	}
}

// adopt redoes one group log into the journals of its agents, under each
// agent's lock, and removes it.
func (s *FileStore) adopt(dir, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return err // its store is open
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	agents := map[string]bool{}
	if _, err := scanGroupLog(name, data, s.markedDurable(), func(e groupEntry) { agents[e.agent] = true }); err != nil {
		return err
	}
	for agent := range agents {
		agentDir := filepath.Join(s.dir, "agents", agent)
		if _, err := os.Stat(agentDir); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		lock, err := lockDir(agent, agentDir, ThisProcess("group-log-recovery"))
		if err != nil {
			return err
		}
		defer lock.Unlock()
		if _, err := s.recoverAgent(agent, agentDir, readMarkBytes(agentDir), true); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	if err := os.Remove(name); err != nil {
		return err
	}
	return syncDir(dir)
}

// writers checks that the rounds of a journal were committed by one
// holder of the agent's lock after another, never two in turn: once a
// round is committed under a new lock epoch, a commit under an earlier
// one means two processes wrote the journal at once.
type writers struct {
	last string
	past map[string]bool
}

func (w *writers) check(rec Record) error {
	if rec.Type != RecCommit || rec.Writer == "" || rec.Writer == w.last {
		return nil
	}
	if w.past[rec.Writer] {
		return fmt.Errorf("round %d was committed under lock epoch %s after another holder of the lock had committed: two processes wrote this journal",
			rec.Round, rec.Writer)
	}
	if w.past == nil {
		w.past = map[string]bool{}
	}
	if w.last != "" {
		w.past[w.last] = true
	}
	w.last = rec.Writer
	return nil
}
