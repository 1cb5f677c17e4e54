package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// journalLog appends to the journal of an agent's newest snapshot and
// replays what it appends, so it always knows the boundary state it would
// snapshot.
type journalLog struct {
	dir     string
	f       *os.File
	size    int64 // bytes in the journal
	round   int64 // bytes appended since the last commit
	base    int   // the round of the snapshot the journal follows
	snapLen int64
	// compactAfter is the size below which the journal is not compacted.
	compactAfter int64
	alloc        int64 // bytes of the journal reserved on disk
	replay       replay
	// With group commit: the group log appends also go to, the CRC-32C
	// of the journal's bytes and of its snapshot (of round snapOf-1), and
	// the entry the last append queued.
	group  *groupLog
	crc    uint32
	snap   uint32
	snapOf int
	seq    uint64
	// lock is the agent's lock, when the store holds it: the journal
	// syncs and commits only while it is current, and stamps commits with
	// its epoch.
	lock *fileLock
	// markFile is the agent's commit mark, rewritten at each durable point.
	markFile *os.File
	// first, for a new agent, are the syncs that make its files durable,
	// running in the background; its first durable point waits for them
	// (first_syncs.go).
	first *firstSyncs
	wbuf  bytes.Buffer // the frames of an append, reused (journal_buf.go)
	entry []byte       // an append's group log entry, reused
}

// segmentSlack is how far past the bytes a journal segment is expected to
// reach (the size of its snapshot, when compaction starts the next one)
// its space is reserved, in multiples of segmentSlack.
const segmentSlack = 64 << 10

// maxReserve bounds how far ahead of its records a journal reserves space.
const maxReserve = 16 << 20

// openJournalLog opens the journal that follows rec's boundary for
// appending, truncating a torn tail. fresh says the journal is new. lock,
// if not nil, is the agent's lock the journal writes under. A commit
// compacts the journal once it holds at least compactAfter bytes and
// more than its snapshot. later, for a new journal, are directories to
// sync in the background instead of the journal's own syncs (see
// firstSyncs); nil syncs the new journal before it returns.
func openJournalLog(dir string, rec *Recovered, fresh bool, lock *fileLock, compactAfter int64, later []string) (*journalLog, error) {
	snaps, err := listRounds(dir, "snap-", ".cbor")
	if err != nil || len(snaps) == 0 {
		return nil, fmt.Errorf("no snapshot in %s", dir)
	}
	base := snaps[len(snaps)-1]
	l := &journalLog{dir: dir, base: base, snapLen: rec.SnapshotBytes, compactAfter: compactAfter, lock: lock,
		replay: replay{st: rec.State, pending: rec.Tail}}
	if l.markFile, err = openMark(dir); err != nil {
		return nil, fmt.Errorf("open commit mark: %w", err)
	}
	if fresh || rec.JournalBytes == 0 {
		if err := l.startSegment(base, later); err != nil {
			l.markFile.Close()
			return nil, err
		}
		return l, nil
	}
	if err := l.reopen(filepath.Join(dir, journalName(base)), rec.JournalBytes, rec.dropped); err != nil {
		l.markFile.Close()
		return nil, err
	}
	return l, nil
}

// reopen opens the journal name for appending after its first size bytes,
// dropping a torn tail: what recovery did not read is not part of the agent.
// When the tail held valid frames (dropped), the cut is synced before
// anything is appended: were it lost, appends that end where one of those
// frames starts would make it part of the journal again.
func (l *journalLog) reopen(name string, size int64, dropped bool) error {
	f, err := os.OpenFile(name, os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("open journal: %w", err)
	}
	err = f.Truncate(size)
	if err == nil && dropped {
		err = syncData(f)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("cut the torn tail of the journal: %w", err)
	}
	if _, err := f.Seek(size, 0); err != nil {
		f.Close()
		return fmt.Errorf("open journal: %w", err)
	}
	l.f, l.size = f, size
	l.reserve(0)
	return nil
}

// startSegment starts the journal that follows the snapshot of round base,
// durably; or, with later, leaving its syncs and those of the directories
// later names to the background and to the first durable point.
func (l *journalLog) startSegment(base int, later []string) error {
	name := filepath.Join(l.dir, journalName(base))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("create journal: %w", err)
	}
	hdr := headerFrame(nil, l.replay.st.Agent, base)
	if _, err := f.Write(hdr); err != nil {
		f.Close()
		return fmt.Errorf("start journal: %w", err)
	}
	alloc := l.segmentSize(int64(len(hdr)))
	if !allocate(f, alloc) {
		alloc = 0
	}
	if later != nil {
		l.f, l.size, l.base, l.alloc = f, int64(len(hdr)), base, alloc
		l.crc = crc32.Checksum(hdr, castagnoli)
		l.first = startFirstSyncs(later)
		return nil
	}
	if err := syncData(f); err != nil {
		f.Close()
		return fmt.Errorf("start journal: %w", err)
	}
	if err := syncDir(l.dir); err != nil {
		f.Close()
		return fmt.Errorf("start journal %s: %w", filepath.Base(name), err)
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.size, l.base, l.alloc = f, int64(len(hdr)), base, alloc
	l.crc = crc32.Checksum(hdr, castagnoli)
	l.writeMark()
	return nil
}

// fence fails once the agent's lock is no longer current: a holder that
// lost its lock file makes nothing more durable and commits nothing.
func (l *journalLog) fence() error {
	if l.lock == nil {
		return nil
	}
	return l.lock.current()
}

// Append writes records to the journal. It does not check the lock: what
// it writes is not durable, nor part of the state, before a Sync or a
// Commit, which do.
func (l *journalLog) Append(recs ...Record) error { return l.write(recs) }

// write appends records to the journal and replays them.
func (l *journalLog) write(recs []Record) error {
	defer l.keepBuffer()
	l.wbuf.Reset()
	for _, rec := range recs {
		if err := appendRecordFrame(&l.wbuf, rec); err != nil {
			return fmt.Errorf("encode %s record: %w", rec.Type, err)
		}
	}
	buf := l.wbuf.Bytes()
	if l.group != nil {
		if err := l.group.usable(); err != nil {
			return fmt.Errorf("append to journal: %w", err)
		}
	}
	l.reserve(int64(len(buf)))
	if _, err := l.f.Write(buf); err != nil {
		return fmt.Errorf("append to journal: %w", err)
	}
	if l.group != nil && len(buf) > 0 {
		if err := l.group.add(l, buf); err != nil {
			return fmt.Errorf("append to journal: %w", err)
		}
	}
	l.size += int64(len(buf))
	l.round += int64(len(buf))
	for _, rec := range recs {
		if err := l.replay.add(rec); err != nil {
			return err
		}
	}
	return nil
}

// Commit appends recs, which end with the round's Commit (or Abort), in
// one write and makes them durable.
func (l *journalLog) Commit(recs ...Record) (int64, error) {
	rec, err := commitRecord(recs)
	if err != nil {
		return 0, err
	}
	if err := l.fence(); err != nil {
		return 0, err
	}
	if l.lock != nil {
		stamped := *rec
		stamped.Writer = l.lock.epoch
		recs = append(recs[:len(recs)-1:len(recs)-1], stamped)
		rec = &recs[len(recs)-1]
	}
	if err := l.write(recs); err != nil {
		return 0, err
	}
	if err := l.sync(); err != nil {
		return 0, err
	}
	written := l.round
	l.round = 0
	if rec.Type == RecCommit && l.size > l.snapLen && l.size >= l.compactAfter {
		if err := l.compact(); err != nil {
			return written, fmt.Errorf("compact journal: %w", err)
		}
	}
	return written, nil
}

// commitRecord is the last of a Commit's records, which must be a Commit
// or an Abort.
func commitRecord(recs []Record) (*Record, error) {
	if len(recs) == 0 {
		return nil, errors.New("commit with no record")
	}
	rec := &recs[len(recs)-1]
	if rec.Type != RecCommit && rec.Type != RecAbort {
		return nil, fmt.Errorf("commit with a %s record", rec.Type)
	}
	return rec, nil
}

// reserve makes sure the journal's space on disk reaches past the next n
// bytes, and past what the segment will grow to before compaction rolls
// it. The reserved tail reads as zeros, which recovery takes for a torn
// tail and opening for append cuts off and reserves again.
func (l *journalLog) reserve(n int64) {
	if l.size+n <= l.alloc {
		return
	}
	if want := l.segmentSize(l.size + n); allocate(l.f, want) {
		l.alloc = want
	}
}

// segmentSize is the space to reserve for a segment that must hold at
// least n bytes: past the snapshot's size, where compaction rolls it, but
// never more than maxReserve ahead of n.
func (l *journalLog) segmentSize(n int64) int64 {
	want := min(max(n, l.snapLen), n+maxReserve) + segmentSlack
	return (want + segmentSlack - 1) / segmentSlack * segmentSlack
}

// Sync makes what was appended durable, then marks it so (see commitMark).
func (l *journalLog) Sync() error {
	if err := l.fence(); err != nil {
		return err
	}
	return l.sync()
}

func (l *journalLog) sync() error {
	if l.first != nil {
		if err := l.first.wait(); err != nil {
			return err
		}
		l.first = nil
	}
	if l.group != nil {
		if err := l.group.wait(l.seq); err != nil {
			return err
		}
	} else if err := syncData(l.f); err != nil {
		return fmt.Errorf("sync journal: %w", err)
	}
	l.writeMark()
	return nil
}

// compact snapshots the boundary, starts a new journal after it, and
// removes all but the previous snapshot and journal.
func (l *journalLog) compact() error {
	st := l.replay.st
	if len(l.replay.pending) > 0 || st.Round == l.base {
		return nil
	}
	prev := l.base
	snap, err := writeSnapshot(l.dir, st)
	if err != nil {
		return err
	}
	l.snapLen = int64(len(snap))
	if err := l.startSegment(st.Round, nil); err != nil {
		return err
	}
	if l.group != nil {
		// The checksum every group entry of the new segment names, from
		// the bytes just written rather than read back (see groupLog.add).
		l.snap, l.snapOf = crc32.Checksum(snap, castagnoli), st.Round+1
	}
	return removeBefore(l.dir, prev)
}

// removeBefore removes snapshots and journals older than round keep,
// listing dir once for both.
func removeBefore(dir string, keep int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, kind := range []struct{ prefix, suffix string }{{"snap-", ".cbor"}, {"journal-", ".log"}} {
		for _, e := range entries {
			if r, ok := roundOf(e.Name(), kind.prefix, kind.suffix); ok && r < keep {
				os.Remove(filepath.Join(dir, fmt.Sprintf("%s%016x%s", kind.prefix, r, kind.suffix)))
			}
		}
	}
	return nil
}

// State is the boundary state the log has reached.
func (l *journalLog) State() *State { return l.replay.st }

// Close closes the journal, once what was appended is durable.
func (l *journalLog) Close() error {
	var err error
	if l.group != nil {
		err = l.group.wait(l.seq)
	}
	return errors.Join(err, l.first.wait(), l.f.Close(), l.markFile.Close())
}

// syncData makes a file's data durable (see fdatasync). Its error names
// the file and the step, as the os package's errors do.
func syncData(f *os.File) error {
	if err := fdatasync(int(f.Fd())); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	syncpoint.Synced(f.Name())
	return nil
}
