package checkpoint

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// FileStoreOption configures OpenFileStore.
type FileStoreOption func(*fileStoreConfig)

type fileStoreConfig struct {
	group        bool
	groupLimit   int64
	compactAfter int64
}

// DefaultCompactAfter is the journal size below which a FileStore does
// not compact an agent (see WithCompactAfter): about 80 rounds of one
// small call, so that a young agent, whose snapshot is small, does not
// pay a snapshot and a new segment, four syncs, every round or two.
const DefaultCompactAfter = 64 << 10

// WithCompactAfter sets how large an agent's journal grows before a
// commit compacts it: once it holds at least n bytes and more than the
// snapshot it follows, the commit writes a new snapshot and starts a new
// journal. The second condition keeps compaction's cost per round flat
// however long the agent runs; n bounds how often it falls due while the
// snapshot is small, and so how much journal an open replays (n, or the
// snapshot's size if larger). 0 compacts whenever the journal outgrows
// its snapshot. The default is DefaultCompactAfter.
func WithCompactAfter(n int64) FileStoreOption {
	return func(c *fileStoreConfig) { c.compactAfter = max(n, 0) }
}

// WithGroupCommit makes the agents of one FileStore share their
// fdatasyncs: every append also goes to the store's group log, and one
// fdatasync of that log makes the commits of all agents waiting at that
// moment durable, instead of one fdatasync of each agent's journal. Agents'
// journals keep their format; the group log only says how to redo their
// appends after a crash (see the package doc, "Group commit"). Use it when
// one process commits rounds of many agents at once; close the store with
// FileStore.Close when done.
func WithGroupCommit() FileStoreOption {
	return func(c *fileStoreConfig) { c.group = true }
}

// withGroupLimit sets the size past which a group log is replaced.
func withGroupLimit(n int64) FileStoreOption {
	return func(c *fileStoreConfig) { c.groupLimit = n }
}

// The frame types of a group log. They are values of their own file
// kind, apart from the record types of journals and snapshots.
const (
	recGroupHeader RecordType = 0x40
	recGroupEntry  RecordType = 0x41
)

// groupVersion is the format of group logs this package writes and reads.
const groupVersion = 1

const (
	groupMagic = "cairn-group-log"
	// defaultGroupLimit is the size past which a group log is replaced by
	// a new one once the journals it redoes are synced.
	defaultGroupLimit = 4 << 20
	// groupEntryMax is the largest append that goes through the group
	// log; a larger one is synced in its own journal at once.
	groupEntryMax = 1 << 20
	// groupDirtyMax bounds the journals one group log redoes before it is
	// replaced, and so the file descriptors it holds.
	groupDirtyMax = 1024
	groupReserve  = 1 << 20
)

var errStoreClosed = errors.New("store is closed")

// groupLog is the group log a FileStore with group commit appends to. One
// goroutine at a time is its leader: it writes what every agent has queued
// and syncs it with one fdatasync, while the next batch queues up.
type groupLog struct {
	dir   string // the store's group directory
	limit int64

	mu       sync.Mutex
	cond     sync.Cond
	buf      []byte // frames queued for the next batch
	spare    []byte // the buffer of the batch written last, for reuse
	queued   uint64 // entries queued so far
	durable  uint64 // entries durable so far
	flushing bool   // a leader is writing; f, name, size and alloc are its
	err      error  // sticky: a failed write or sync fails every later commit
	// dirty holds, for each journal file with entries in the current
	// log, a duplicate of its descriptor: replacing the log syncs them.
	dirty map[*os.File]int

	f           *os.File
	name        string
	size, alloc int64
	syncs       atomic.Int64 // fdatasyncs, for benchmarks
}

// openGroupLog starts a new group log in dir.
func openGroupLog(dir string, limit int64) (*groupLog, error) {
	g := &groupLog{dir: dir, limit: limit, dirty: map[*os.File]int{}}
	g.cond.L = &g.mu
	f, name, err := createGroupFile(dir)
	if err != nil {
		return nil, fmt.Errorf("start group log: %w", err)
	}
	g.f, g.name = f, name
	g.size, _ = f.Seek(0, io.SeekCurrent)
	g.alloc = groupReserve
	return g, nil
}

// createGroupFile makes a group log holding only its header, durable and
// locked by this process before its name appears: it is written as a temp
// file, locked, synced, then renamed. Nothing reads or adopts temp files.
func createGroupFile(dir string) (*os.File, string, error) {
	var id [8]byte
	rand.Read(id[:])
	name := filepath.Join(dir, hex.EncodeToString(id[:])+".log")
	f, err := os.OpenFile(name+".tmp", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, "", err
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		_, err = f.Write(groupHeaderFrame(groupVersion, time.Now()))
	}
	if err == nil {
		allocate(f, groupReserve)
		err = syncData(f)
	}
	if err == nil {
		err = os.Rename(name+".tmp", name)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		f.Close()
		os.Remove(name + ".tmp")
		return nil, "", err
	}
	return f, name, nil
}

// groupHeaderFrame opens a group log: its format and when it was made,
// which orders the logs of a store.
func groupHeaderFrame(version uint64, created time.Time) []byte {
	payload := binary.AppendUvarint([]byte(groupMagic), version)
	payload = binary.AppendUvarint(payload, uint64(created.UnixNano()))
	return appendFrame(nil, recGroupHeader, payload)
}

// attach makes l append through the group log. It syncs the journal
// first, so that what earlier holders left unsynced cannot be lost under
// the entries that follow it, and takes the checksum of its bytes, which
// every entry names as the prefix it goes after.
func (g *groupLog) attach(l *journalLog) error {
	crc, err := checksumPrefix(l.f.Name(), l.size)
	if err != nil {
		return err
	}
	if err := syncData(l.f); err != nil {
		return err
	}
	l.crc = crc
	l.group = g
	return nil
}

// checksumPrefix is the checksum of the first n bytes of the file name,
// read without what lies after them: a journal's reserved space can be
// many times its records.
func checksumPrefix(name string, n int64) (uint32, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	switch copied, err := io.Copy(h, io.LimitReader(f, n)); {
	case err != nil:
		return 0, err
	case copied < n:
		return 0, fmt.Errorf("journal %s is shorter than its records", name)
	}
	return h.Sum32(), nil
}

// usable fails once the log has failed or its store is closed.
func (g *groupLog) usable() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// add queues data, just written to l's journal at l.size, as an entry. A
// large append is synced in the journal itself instead.
func (g *groupLog) add(l *journalLog, data []byte) error {
	prefix := l.crc
	l.crc = crc32.Update(l.crc, castagnoli, data)
	if len(data) > groupEntryMax {
		return syncData(l.f)
	}
	if l.snapOf != l.base+1 {
		snap, err := os.ReadFile(filepath.Join(l.dir, snapName(l.base)))
		if err != nil {
			return err
		}
		l.snap, l.snapOf = crc32.Checksum(snap, castagnoli), l.base+1
	}
	entry := groupEntry{agent: l.replay.st.Agent, base: l.base, snap: l.snap, off: l.size, prefix: prefix, data: data}
	l.entry = appendEntryFrame(l.entry[:0], entry)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	if _, ok := g.dirty[l.f]; !ok {
		fd, err := unix.FcntlInt(l.f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("group log: %w", err)
		}
		g.dirty[l.f] = fd
	}
	g.buf = append(g.buf, l.entry...)
	g.queued++
	l.seq = g.queued
	return nil
}

// wait returns once entry seq is durable, leading a batch if no one else
// is writing one.
func (g *groupLog) wait(seq uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.durable < seq {
		switch {
		case g.flushing:
			g.cond.Wait()
		case g.err != nil:
			return g.err
		default:
			g.lead()
		}
	}
	return nil
}

// lead writes and syncs the queued batch, and replaces the log when it has
// grown past its limit. It is called, and returns, with g.mu held.
func (g *groupLog) lead() {
	g.flushing = true
	buf, upto := g.buf, g.queued
	// The next batch queues in the buffer of the last one, this one's
	// is kept for the batch after: two buffers, not one per batch.
	g.buf, g.spare = g.spare[:0], nil
	var dirty map[*os.File]int
	full := g.size+int64(len(buf)) >= g.limit || len(g.dirty) >= groupDirtyMax
	if full {
		dirty, g.dirty = g.dirty, map[*os.File]int{}
	}
	g.mu.Unlock()
	err := g.write(buf)
	if full {
		if err == nil {
			err = g.replace(dirty)
		} else {
			closeAll(dirty)
		}
	}
	g.mu.Lock()
	g.flushing = false
	if err != nil {
		g.err = fmt.Errorf("group log: %w", err)
	} else {
		g.durable = upto
	}
	if cap(buf) <= maxKeptBuffer {
		g.spare = buf[:0]
	}
	g.cond.Broadcast()
}

// write appends a batch and makes it durable with one fdatasync.
func (g *groupLog) write(buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	end := g.size + int64(len(buf))
	if end > g.alloc {
		want := (end + groupReserve - 1) / groupReserve * groupReserve
		if allocate(g.f, want) {
			g.alloc = want
		}
	}
	if _, err := g.f.WriteAt(buf, g.size); err != nil {
		return err
	}
	g.size = end
	g.syncs.Add(1)
	return syncData(g.f)
}

// replace starts a new group log and removes the current one once every
// journal it redoes is synced: from then on nothing needs it.
func (g *groupLog) replace(dirty map[*os.File]int) error {
	f, name, err := createGroupFile(g.dir)
	if err != nil {
		return err
	}
	if err := g.syncJournals(dirty); err != nil {
		f.Close()
		os.Remove(name)
		return err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		f.Close()
		os.Remove(name)
		return err
	}
	os.Remove(g.name)
	g.f.Close()
	g.f, g.name, g.size, g.alloc = f, name, size, groupReserve
	return nil
}

// syncJournals syncs and closes the duplicated journal descriptors, a few
// at a time: concurrent fdatasyncs share the file system's journal commit.
func (g *groupLog) syncJournals(dirty map[*os.File]int) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(dirty))
	sem := make(chan struct{}, 16)
	for _, fd := range dirty {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			if err := fdatasync(fd); err != nil {
				errs <- err
			}
			unix.Close(fd)
			g.syncs.Add(1)
			<-sem
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// close syncs what is queued and every journal the log redoes, then
// removes the log. Logs still open fail their next append.
func (g *groupLog) close() error {
	g.mu.Lock()
	for g.flushing {
		g.cond.Wait()
	}
	if g.err == errStoreClosed {
		g.mu.Unlock()
		return nil
	}
	prev := g.err
	g.flushing, g.err = true, errStoreClosed
	buf, upto, dirty := g.buf, g.queued, g.dirty
	g.buf, g.dirty = nil, nil
	g.mu.Unlock()

	err := prev
	if err == nil {
		err = g.write(buf)
	}
	if serr := g.syncJournals(dirty); err == nil {
		err = serr
	}
	if err == nil {
		os.Remove(g.name)
	}
	g.f.Close()

	g.mu.Lock()
	if err == nil {
		g.durable = upto
	}
	g.flushing = false
	g.cond.Broadcast()
	g.mu.Unlock()
	return err
}

func closeAll(fds map[*os.File]int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// startGroup starts the group log of a store opened with WithGroupCommit,
// after adopting the logs that stores no longer open left behind.
func (s *FileStore) startGroup(c fileStoreConfig) error {
	if !c.group {
		return nil
	}
	dir := filepath.Join(s.dir, "group")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	s.adoptGroupLogs(dir)
	g, err := openGroupLog(dir, c.groupLimit)
	s.group = g
	return err
}

// attach makes a journal opened for writing append through the store's
// group log, if it has one.
func (s *FileStore) attach(l *journalLog, err error) (Log, error) {
	if err != nil {
		return nil, err
	}
	if s.group != nil {
		if err := s.group.attach(l); err != nil {
			l.Close()
			return nil, fmt.Errorf("attach journal to group log: %w", err)
		}
	}
	return l, nil
}

// Close closes a store opened with WithGroupCommit: it makes every journal
// whose appends the group log holds durable and removes the log. Close
// the agents' logs first; one still open fails its next append. A store
// that is not closed leaves its group log to be redone by readers and
// adopted by the next store opened with WithGroupCommit. Close does
// nothing for a store without group commit.
func (s *FileStore) Close() error {
	if s.group == nil {
		return nil
	}
	if err := s.group.close(); err != nil {
		return fmt.Errorf("close store %s: %w", s.dir, err)
	}
	return nil
}
