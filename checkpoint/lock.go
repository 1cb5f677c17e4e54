package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Holder is who holds an agent's lock, for the error the next one gets.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Run     string    `json:"run"`
	Started time.Time `json:"started"`
	// Epoch names this holding of the lock and no other: taking the lock
	// sets it, and every round the holder commits carries it.
	Epoch string `json:"epoch,omitempty"`
}

// ThisProcess is a Holder for the calling process.
func ThisProcess(run string) Holder {
	host, _ := os.Hostname()
	return Holder{PID: os.Getpid(), Host: host, Run: run, Started: time.Now().UTC()}
}

// ErrLocked is matched by a *LockedError, and by the error of a holder
// whose lock was lost (ErrLockLost).
var ErrLocked = errors.New("agent is locked by another process")

// LockedError says who holds an agent.
type LockedError struct {
	Agent  string
	Holder Holder // zero when the holder could not be read
	// Lease is true when the lock is a lease that expires unless its
	// holder renews it (pgstore): a holder on another machine whose
	// process is gone lets go when it expires, or can be stolen.
	Lease bool
	// Expires is when the lease runs out unless renewed; zero when not
	// known or not a lease.
	Expires time.Time
}

func (e *LockedError) Error() string {
	h := e.Holder
	advice := fmt.Sprintf("wait for it to end, or stop it at its next round with `cairn pause %s`", e.Agent)
	if task, ok := briefTask(h.Run); ok && h.PID != 0 {
		// Not a run: a command that holds the agent for a moment, which a
		// pause does not stop.
		advice = fmt.Sprintf("it holds the agent only while it %s: try again when it is done", task)
		if makesAgent(h.Run) {
			// A second maker of the id, tried again, would find the agent
			// the first made.
			advice = fmt.Sprintf("it is making the agent (`cairn %s`): once it is done the agent is there (`cairn show %s`); "+
				"to make another, give it another id", h.Run, e.Agent)
		}
	}
	if h.PID == 0 {
		return fmt.Sprintf("agent %q is locked by another process; %s", e.Agent, advice)
	}
	if e.Lease {
		expires := "expires unless renewed"
		if !e.Expires.IsZero() {
			expires = "expires at " + e.Expires.Local().Format(time.RFC3339) + " unless renewed"
		}
		advice += "; if that process is gone, its lease " + expires +
			", or `cairn resume --steal` takes the agent at once (only when it surely no longer runs)"
	}
	return fmt.Sprintf("agent %q is locked by process %d on %s (run %s, started %s); %s",
		e.Agent, h.PID, h.Host, h.Run, h.Started.Local().Format(time.RFC3339), advice)
}

// Is makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// ErrLockLost: a write by a holder that lost its lock — its lock file was
// removed or replaced under it, or (pgstore's *FencedError) its lease was
// taken over by another process; nothing more it wrote was made durable.
var ErrLockLost = errors.New("agent's lock file was removed or replaced")

// lockLostError refuses a write by a holder whose lock file is no longer
// the one the agent's directory names: someone removed or replaced it, so
// the holder can no longer prove it is the agent's only writer. Nothing
// is written after it; the agent stays at its last durable record.
type lockLostError struct {
	Agent string
	Path  string
	How   string // "removed" or "replaced"; dirGone when the directory went with it
}

// dirGone is the How of a lock whose agent's directory is no longer where
// it was: removed, or moved out of the store, with the lock file in it.
const dirGone = "gone with its directory"

func (e *lockLostError) Error() string {
	if e.How == dirGone {
		// Nothing of the agent is left where resume looks for it.
		dir := filepath.Dir(e.Path)
		return fmt.Sprintf("agent %q: its directory %s was removed or moved while this process held it, so this process stopped writing the agent; "+
			"there is no agent there to resume: if the directory was moved, move it back and resume the agent; if it was removed, restore it from a backup",
			e.Agent, dir)
	}
	return fmt.Sprintf("agent %q: its lock file %s was %s while this process held it, so this process stopped writing the agent; "+
		"the agent is kept as of its last durable record: make sure no other process runs it, then resume it",
		e.Agent, e.Path, e.How)
}

// Is makes errors.Is(err, ErrLockLost) and errors.Is(err, ErrLocked) hold:
// like a lock held by another process, it means this one may not go on.
func (e *lockLostError) Is(target error) bool { return target == ErrLockLost || target == ErrLocked }

// Lock is a held agent lock.
type Lock interface {
	Unlock() error
}

// fileLock is a flock on agents/<id>/lock and one on the agent's directory.
// The file is never deleted by cairn, but a person or a script may delete
// or replace it: the directory's flock keeps a second process out even
// then, and the holder, which checks at each Sync and Commit that the path
// still names the file it locked, stops there (see RATIONALE.md).
type fileLock struct {
	agent string
	path  string
	f     *os.File // the lock file, flocked
	d     *os.File // the agent's directory, flocked
	// dev and ino are the lock file's, as it was locked.
	dev, ino uint64
	epoch    string
	// made: taking the lock made the agent's directory; release removes
	// it again if no state was stored in it (a start that failed).
	made    bool
	release func() // with a FileStore: forget the lock

	// past is, with a FileStore, the agent's past file open for appending.
	past *os.File
}

// Unlock clears the holder from the file, then releases the lock, so the
// next process to lose never reads a holder that has gone. A directory
// the lock made for an agent that got no state is removed.
func (l *fileLock) Unlock() error {
	if l.f == nil {
		return nil // unlocked before
	}
	defer func() { l.f, l.d = nil, nil }()
	if l.release != nil {
		l.release()
	}
	if l.made && !hasState(filepath.Dir(l.path)) {
		os.RemoveAll(filepath.Dir(l.path))
	} else {
		l.f.Truncate(0)
	}
	return errors.Join(l.f.Close(), l.d.Close())
}

// hasState reports whether dir holds a snapshot of an agent.
func hasState(dir string) bool {
	snaps, _ := listRounds(dir, "snap-", ".cbor")
	return len(snaps) > 0
}

// current fails with a *lockLostError once the lock file's path no longer
// names the file this lock holds: it was removed or replaced, or the
// agent's directory was. It costs one stat, and one more of the directory
// once the file is gone.
func (l *fileLock) current() error {
	var now unix.Stat_t
	switch err := unix.Stat(l.path, &now); {
	case err != nil:
		if same, _, _ := sameFile(filepath.Dir(l.path), l.d); l.d != nil && !same {
			return &lockLostError{Agent: l.agent, Path: l.path, How: dirGone}
		}
		return &lockLostError{Agent: l.agent, Path: l.path, How: "removed"}
	case uint64(now.Dev) != l.dev || uint64(now.Ino) != l.ino:
		return &lockLostError{Agent: l.agent, Path: l.path, How: "replaced"}
	}
	return nil
}

// sameFile reports whether path names f (the same device and inode), and
// f's device and inode.
func sameFile(path string, f *os.File) (same bool, dev, ino uint64) {
	var held, now unix.Stat_t
	if unix.Fstat(int(f.Fd()), &held) != nil || unix.Stat(path, &now) != nil {
		return false, 0, 0
	}
	dev, ino = uint64(held.Dev), uint64(held.Ino)
	return dev == uint64(now.Dev) && ino == uint64(now.Ino), dev, ino
}

// lockSettle is how long lockDir tries again while the lock looks free
// or held by a holder not written in yet: a holder writes itself in just
// after it takes the lock, but a loaded machine may hold it up between.
const lockSettle = 2 * time.Second

// lockDir takes the lock in dir, making dir if need be, without waiting on
// a live holder (but, for up to lockSettle, on a command that holds an
// agent for a moment, heldForAMoment), and writes this process in as the
// holder, with a new epoch. A dir it made and did not lock is removed
// again.
func lockDir(agent, dir string, h Holder) (l *fileLock, err error) {
	made := false
	defer func() {
		if err != nil && made {
			os.Remove(dir) // only if it is still empty
		}
	}()
	var waited error // the holder waited for, refused with if it stays
	for deadline := time.Now().Add(lockSettle); time.Now().Before(deadline); {
		switch err := os.Mkdir(dir, 0o700); {
		case err == nil:
			made = true
		case !errors.Is(err, fs.ErrExist):
			return nil, fmt.Errorf("lock agent %q: %w", agent, err)
		}
		l, retry, err := tryLock(agent, dir)
		if heldForAMoment(err) {
			waited, retry, err = err, true, nil
		}
		if err != nil || !retry {
			if err == nil {
				l.made = made
				err = l.claim(h)
			}
			return l, err
		}
		time.Sleep(5 * time.Millisecond)
	}
	if waited != nil {
		return nil, waited
	}
	return nil, &LockedError{Agent: agent}
}

// heldForAMoment reports whether err is the lock of an agent held by a
// command that looks at it and lets go, which another command waits for
// rather than fail: `cairn gc` (run from cron, say, while agents are
// forked and resumed; it locks every directory under agents/, one a fork
// or a first run has just made for a new agent too), a snapshot (of a
// fork's source), an undo, a decision, a look at a workflow. A holder
// that makes an agent (a fork, an import, a fresh start) is not waited
// for: one of two makers of an id fails at once.
func heldForAMoment(err error) bool {
	var le *LockedError
	if !errors.As(err, &le) {
		return false
	}
	switch le.Holder.Run {
	case "gc", "snapshot", "undo", "decide", "workflow status":
		return true
	}
	return false
}

// tryLock takes the directory's flock, then the lock file's, and checks
// that both paths still name what was locked. retry: the lock looked free
// or held by no one that could be read, and is worth trying again (a
// holder writes itself into the file just after taking the lock and clears
// it just before releasing it; a file or directory removed or replaced
// under the lock's taker is opened again).
func tryLock(agent, dir string) (l *fileLock, retry bool, err error) {
	path := filepath.Join(dir, "lock")
	d, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil // a holder that made it removed it as it let go
	}
	if err != nil {
		return nil, false, fmt.Errorf("lock agent %q: %w", agent, err)
	}
	if ok, err := flockTry(d); !ok || err != nil {
		d.Close()
		err = lockedOr(agent, path, err)
		return nil, err == nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		d.Close()
		return nil, true, nil // its directory was removed since
	}
	if err != nil {
		d.Close()
		return nil, false, fmt.Errorf("lock agent %q: %w", agent, err)
	}
	if ok, err := flockTry(f); !ok || err != nil {
		f.Close()
		d.Close()
		err = lockedOr(agent, path, err)
		return nil, err == nil, err
	}
	sameDir, _, _ := sameFile(dir, d)
	same, dev, ino := sameFile(path, f)
	if !sameDir || !same {
		f.Close()
		d.Close()
		return nil, true, nil
	}
	return &fileLock{agent: agent, path: path, f: f, d: d, dev: dev, ino: ino}, false, nil
}

// lockedOr is the error of a lock that was not taken: err, or the holder
// when it can be read (nil when it cannot, to try again).
func lockedOr(agent, path string, err error) error {
	if err != nil {
		return fmt.Errorf("lock agent %q: %w", agent, err)
	}
	if h, ok := readHolder(path); ok {
		return &LockedError{Agent: agent, Holder: h}
	}
	return nil
}

// claim writes h, with a new epoch, into the lock file as the holder.
func (l *fileLock) claim(h Holder) error {
	var b [8]byte
	rand.Read(b[:])
	h.Epoch = hex.EncodeToString(b[:])
	data, _ := json.Marshal(h)
	_, werr := l.f.WriteAt(data, 0)
	if err := errors.Join(werr, l.f.Truncate(int64(len(data)))); err != nil {
		l.f.Close()
		l.d.Close()
		return fmt.Errorf("lock agent %q: write holder into %s: %w", l.agent, l.path, err)
	}
	l.epoch = h.Epoch
	return nil
}

// flockTry takes an exclusive flock on f without waiting; false when
// another open file holds it.
func flockTry(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, unix.EINTR):
			return false, err
		}
	}
}

// readHolder reads who holds a lock: a process that is alive, or one on
// another host. A holder killed with -9 leaves its name behind; a dead
// process is no holder.
func readHolder(path string) (Holder, bool) {
	var h Holder
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &h) != nil || h.PID == 0 {
		return Holder{}, false
	}
	host, _ := os.Hostname()
	return h, h.Host != host || alive(h.PID)
}

// alive reports whether a process of this host exists.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

// lockHeld reports whether another process holds the lock in dir now.
func lockHeld(dir string) bool {
	for _, path := range []string{dir, filepath.Join(dir, "lock")} {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		ok, err := flockTry(f)
		f.Close() // closing releases a flock taken here
		if err == nil && !ok {
			return true
		}
	}
	return false
}

// makesAgent says whether a holder of that name makes the agent it holds
// (a fork's new agent, an import's).
func makesAgent(name string) bool { return name == "fork" || name == "import" }

// briefTask says what a holder that is not a run does with the agent, by
// the name it holds the lock under; ok is false for a run's.
func briefTask(name string) (task string, ok bool) {
	switch name {
	case "gc":
		return "collects its garbage (`cairn gc`)", true
	case "undo", "fork", "snapshot", "import":
		return fmt.Sprintf("runs `cairn %s`", name), true
	case "decide":
		return "records a decision (`cairn approve` or `cairn deny`)", true
	case "workflow status":
		return "looks whether the workflow still runs (`cairn workflow ls` or `show`)", true
	case "fresh":
		return "starts it afresh", true
	case "group-log-recovery":
		return "redoes its appends from a group log a crash left", true
	}
	return "", false
}
