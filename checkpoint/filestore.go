package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Errors a caller branches on.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
)

// CheckID refuses an agent id that could name anything but one directory
// of the store: it must match ^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$ (checked
// byte by byte; the store asks on every call that names an agent).
func CheckID(id string) error {
	ok := len(id) > 0 && len(id) <= 128 && id[0] != '.'
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
	}
	if !ok {
		return idError(id)
	}
	return nil
}

// ErrInvalidID is matched by CheckID's error: a name that cannot be an
// agent's id.
var ErrInvalidID = errors.New("invalid agent id")

type idError string

func (e idError) Error() string {
	return fmt.Sprintf("agent id %q: want 1 to 128 of letters, digits, '.', '_' and '-', not starting with '.'", string(e))
}

func (e idError) Is(target error) bool { return target == ErrInvalidID }

// FileStore keeps agents in a directory; see the package doc for its
// layout. It is safe for concurrent use; each agent is guarded by its lock.
type FileStore struct {
	dir   string
	group *groupLog // with WithGroupCommit
	// compactAfter is the journal size below which no commit compacts
	// (WithCompactAfter).
	compactAfter int64

	mu   sync.Mutex
	held map[string]*fileLock // the agents this store has locked, by id
	// pastsChecked are the agents whose past file this store has checked
	// for a torn tail since it locked them.
	pastsChecked sync.Map
	// summaries are the agents' summaries as last read (Summary).
	summaries summaryCache
}

var _ Store = (*FileStore)(nil)

// OpenFileStore opens (making it if needed) the store in dir.
func OpenFileStore(dir string, opts ...FileStoreOption) (*FileStore, error) {
	for _, d := range []string{"agents", filepath.Join("blobs", "sha256")} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
	}
	c := fileStoreConfig{groupLimit: defaultGroupLimit, compactAfter: DefaultCompactAfter}
	for _, o := range opts {
		o(&c)
	}
	s := &FileStore{dir: dir, held: map[string]*fileLock{}, compactAfter: c.compactAfter}
	if err := s.startGroup(c); err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	return s, nil
}

// Dir is the store's directory.
func (s *FileStore) Dir() string { return s.dir }

func (s *FileStore) agentDir(id string) (string, error) {
	if err := CheckID(id); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, "agents", id), nil
}

// Lock takes an agent's lock, making its directory if it is new. The
// journal the store opens for the agent while the lock is held writes
// only while the lock is current (else it fails with ErrLockLost), and stamps every
// commit with the lock's epoch. A directory the lock made is removed
// again when it is released with no state stored in it.
func (s *FileStore) Lock(id string, h Holder) (Lock, error) {
	dir, err := s.agentDir(id)
	if err != nil {
		return nil, err
	}
	l, err := lockDir(id, dir, h)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.held[id] = l
	s.mu.Unlock()
	s.pastsChecked.Delete(id)
	l.release = func() {
		s.mu.Lock()
		if s.held[id] == l {
			delete(s.held, id)
		}
		s.closePast(l)
		s.mu.Unlock()
	}
	return l, nil
}

// lockOf is the lock this store holds on an agent, or nil.
func (s *FileStore) lockOf(id string) *fileLock {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[id]
}

// Exists reports whether the agent has any state: a snapshot, or a commit
// mark that says one was durable. An agent whose only snapshot is gone
// exists, and is lost (Open says so); it is not free to be made again over
// the journal it left, unless it is removed first.
func (s *FileStore) Exists(id string) bool {
	dir, err := s.agentDir(id)
	if err != nil {
		return false
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_, snap := roundOf(e.Name(), "snap-", ".cbor")
		_, journal := roundOf(e.Name(), "journal-", ".log")
		if snap || journal && e.Type().IsRegular() { // a journal without its snapshot is an agent that lost it
			return true
		}
	}
	_, marked := readMark(dir)
	return marked
}

// Create writes a new agent's first snapshot and journal. The caller holds
// the agent's lock.
func (s *FileStore) Create(id string, st *State) (Log, error) {
	dir, err := s.agentDir(id)
	if err != nil {
		return nil, err
	}
	if s.Exists(id) {
		return nil, fmt.Errorf("create agent %q: %w", id, ErrExists)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create agent %q: %w", id, err)
	}
	// The directories that lead to the agent's (and to the blobs stored
	// for it) are durable before anything in them is relied on: at once
	// with group commit, else by the agent's first durable point
	// (first_syncs.go).
	leading := []string{filepath.Join(s.dir, "agents"), filepath.Join(s.dir, "blobs"), s.dir}
	if s.group != nil {
		if err := errors.Join(syncDir(leading[0]), syncDir(leading[1]), syncDir(leading[2])); err != nil {
			return nil, fmt.Errorf("create agent %q: %w", id, err)
		}
		if _, err := writeSnapshot(dir, st); err != nil {
			return nil, fmt.Errorf("create agent %q: %w", id, err)
		}
		return s.attach(openJournalLog(dir, &Recovered{State: st}, true, s.lockOf(id), s.compactAfter, nil))
	}
	if _, err := writeSnapshotUnnamed(dir, st); err != nil {
		return nil, fmt.Errorf("create agent %q: %w", id, err)
	}
	log, err := openJournalLog(dir, &Recovered{State: st}, true, s.lockOf(id), s.compactAfter, append([]string{dir}, leading...))
	if err != nil {
		return nil, fmt.Errorf("create agent %q: %w", id, err)
	}
	return log, nil
}

// Remove deletes an agent's snapshots and journals, keeping its lock file,
// its event history and its bookmarks. The caller holds the lock.
func (s *FileStore) Remove(id string) error { return s.removeAgent(id, nil) }

// errStopped is what remove returns when its stop hook ends it.
var errStopped = errors.New("stopped by the stop hook")

// removeAgent is Remove with a hook called before each file it removes; when
// it returns true, removeAgent stops there as if the process had died. Tests
// use it to stop Remove after each removal.
func (s *FileStore) removeAgent(id string, stop func() bool) error {
	dir, err := s.agentDir(id)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("remove agent %q: %w", id, err)
	}
	s.pastsChecked.Delete(id)
	s.mu.Lock()
	s.closePast(s.held[id])
	s.mu.Unlock()
	rm := func(n string) error {
		if stop != nil && stop() {
			return errStopped
		}
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove agent %q: %w", id, err)
		}
		return nil
	}
	// The snapshots first, the newest before the older ones, then the
	// journals, the pasts and last the mark: a crash in between leaves an
	// agent that is refused as lost, by a journal whose snapshot is gone
	// or by the mark, and never one that loads as an older round (the
	// newest snapshot without its journal, nothing saying what that
	// journal held), which a resume would run again from there. What is
	// left is removed by the next Remove (`cairn run --fresh`).
	var snaps, journals, pasts []string
	for _, e := range slices.Backward(entries) {
		switch n := e.Name(); {
		case strings.HasPrefix(n, "snap-"):
			snaps = append(snaps, n)
		case strings.HasPrefix(n, "journal-"):
			journals = append(journals, n)
		case n == pastFile || n == pastIndexFile:
			pasts = append(pasts, n)
		}
	}
	for _, n := range slices.Concat(snaps, journals, pasts, []string{markName}) {
		if err := rm(n); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

// Open recovers an agent for writing: its state at the last boundary and
// the records of its interrupted round. A torn tail is truncated away. The
// caller holds the agent's lock.
//
// # Errors
//
// ErrNotFound for an agent with no state, *FutureSchemaError and
// *CorruptError (which leave every file as it was).
func (s *FileStore) Open(id string) (*Recovered, Log, error) {
	dir, err := s.agentDir(id)
	if err != nil {
		return nil, nil, err
	}
	rec, err := s.recoverAgent(id, dir, readMarkBytes(dir), true)
	if err != nil {
		return nil, nil, err
	}
	log, err := s.attach(openJournalLog(dir, rec, false, s.lockOf(id), s.compactAfter, nil))
	if err != nil {
		return nil, nil, fmt.Errorf("open journal of agent %q: %w", id, err)
	}
	return rec, log, nil
}

// Read recovers an agent without its lock and without changing any file.
//
// A writer may commit while Read reads, and its compactions remove the
// files Read has begun on. It writes the agent's commit mark before it
// removes any file a reader of the earlier mark relies on, so a read that
// fails while the mark changes under it is read again: only a failure
// over an unchanged mark is the agent's own.
func (s *FileStore) Read(id string) (*Recovered, error) {
	dir, err := s.agentDir(id)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		before := readMarkBytes(dir)
		rec, err := s.recoverAgent(id, dir, before, false)
		if err == nil || attempt == maxReadAttempts || bytes.Equal(before, readMarkBytes(dir)) {
			return rec, err
		}
	}
}

// maxReadAttempts bounds how often Read starts again because a writer
// moved the agent on while it read. Each attempt that meets that race
// spans two of the writer's compactions, which come once every
// DefaultCompactAfter bytes (with WithCompactAfter(0), as tests ask, as
// often as every few commits, so the bound is generous for a reader that
// a loaded machine holds up).
const maxReadAttempts = 64

// List summarises every agent of the store, by id.
func (s *FileStore) List() ([]Summary, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, "agents"))
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	var out []Summary
	listed := map[string]bool{}
	group, grouped := groupKey(filepath.Join(s.dir, "group")) // once for every agent
	for _, e := range entries {
		if !e.IsDir() || CheckID(e.Name()) != nil || !s.Exists(e.Name()) {
			continue
		}
		sum := s.summary(e.Name(), group, grouped)
		out = append(out, sum)
		listed[e.Name()] = true
	}
	s.summaries.keep(listed)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Summary summarises one agent. An agent that cannot be read has its
// error in Summary.Err; ErrNotFound when there is no such agent, and
// ErrInvalidID (before the store is looked at) for an id that cannot be
// one. An agent whose files did not change since this store last
// summarised it is not read again (summaryCache).
func (s *FileStore) Summary(id string) (Summary, error) {
	if err := CheckID(id); err != nil {
		return Summary{}, err
	}
	if !s.Exists(id) {
		return Summary{}, fmt.Errorf("agent %q: %w", id, ErrNotFound)
	}
	group, grouped := groupKey(filepath.Join(s.dir, "group"))
	return s.summary(id, group, grouped), nil
}

// summary is Summary of an agent that exists, with group the identity of
// the store's group logs (groupKey), if had.
func (s *FileStore) summary(id, group string, grouped bool) Summary {
	dir := filepath.Join(s.dir, "agents", id)
	locked := lockHeld(dir)
	key, keyed := filesKey(dir, group)
	keyed = keyed && grouped
	if sum, ok := s.summaries.get(id, key); keyed && ok {
		sum.Locked = locked
		return sum
	}
	sum := Summary{ID: id}
	if rec, err := s.Read(id); err != nil {
		sum.Err = err
	} else {
		sum.fill(rec)
	}
	if keyed && sum.Err == nil {
		// What was read is as new as the files the key names, or newer;
		// if newer, the files are no longer the key's, and the next
		// Summary reads them again. An agent that could not be read is
		// read again every time: what failed may not be its files.
		s.summaries.put(id, key, sum)
	}
	sum.Locked = locked
	return sum
}

// PutBlob stores data under its digest, crash-atomically, once. Storing
// a blob that is there makes it fresh again, so that Collect leaves it to
// whoever stores it now, and compares the stored file with data: a file
// that no longer holds them (damaged by a disk, a bad restore or a hand,
// or something other than a regular file in its place) is written again,
// durably, so that storing a blob repairs it — an import of an export
// that holds it, or a run that stores the same file. A file that holds
// them is left as it is.
func (s *FileStore) PutBlob(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	hexSum := hex.EncodeToString(sum[:])
	path := filepath.Join(s.dir, "blobs", "sha256", hexSum)
	if fileHolds(path, data) {
		now := time.Now()
		os.Chtimes(path, now, now)
		return "sha256:" + hexSum, nil
	}
	if err := writeAtomic(path, data); err != nil {
		return "", fmt.Errorf("store blob: %w", err)
	}
	return "sha256:" + hexSum, nil
}

// fileHolds reports whether path is a regular file whose content is
// data, reading it a piece at a time. A file it cannot read holds nothing.
func fileHolds(path string, data []byte) bool {
	// O_NONBLOCK: opening a FIFO for reading waits for a writer without it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) {
		return false
	}
	buf := make([]byte, min(len(data), 64<<10))
	for off := 0; off < len(data); {
		n, err := io.ReadFull(f, buf[:min(len(buf), len(data)-off)])
		if err != nil || !bytes.Equal(buf[:n], data[off:off+n]) {
			return false
		}
		off += n
	}
	n, _ := f.Read(make([]byte, 1))
	return n == 0
}

// Blob returns the bytes stored under digest, checking them against it.
//
// # Errors
//
// ErrNotFound for a digest the store does not keep; a *CorruptError for
// content that does not match its digest, and for something other than a
// regular file in its place (a FIFO, a device, a directory), which is not
// opened for reading: it could block, or never end.
func (s *FileStore) Blob(digest string) ([]byte, error) {
	hexSum, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexSum) != 64 || strings.ContainsAny(hexSum, `/\.`) {
		return nil, fmt.Errorf("blob %q: not a sha256 digest", digest)
	}
	// O_NONBLOCK: opening a FIFO for reading waits for a writer without it.
	f, err := os.OpenFile(filepath.Join(s.dir, "blobs", "sha256", hexSum), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("blob %s: %w", digest, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", digest, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", digest, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &corruptBlobError{&CorruptError{File: "blob " + digest, Reason: fmt.Sprintf("not a regular file (mode %s), so it was not read", fi.Mode())},
			"remove it; storing the blob again (`cairn import` of an export that holds it, or a run that stores the same file) then writes it"}
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("blob %s: %w", digest, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hexSum {
		return nil, &corruptBlobError{&CorruptError{File: "blob " + digest, Reason: "content does not match its digest"},
			"storing the blob again repairs it (`cairn import` of an export that holds it, or a run that stores the same file), or restore it from a backup"}
	}
	return data, nil
}

// corruptBlobError is a blob file that does not hold its digest's bytes.
// It says what repairs a blob where the *CorruptError it wraps (errors.As
// finds it, and errors.Is(err, ErrCorrupt) holds) speaks of an agent's
// file: storing the blob again writes it anew (see PutBlob).
type corruptBlobError struct {
	err *CorruptError
	fix string
}

func (e *corruptBlobError) Error() string {
	return fmt.Sprintf("%s is corrupt: %s; nothing was changed — %s", e.err.File, e.err.Reason, e.fix)
}

func (e *corruptBlobError) Unwrap() error { return e.err }
