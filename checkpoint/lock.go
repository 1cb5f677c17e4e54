package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// Holder is who holds an agent's lock, for the error the next one gets.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Run     string    `json:"run"`
	Started time.Time `json:"started"`
}

// ThisProcess is a Holder for the calling process.
func ThisProcess(run string) Holder {
	host, _ := os.Hostname()
	return Holder{PID: os.Getpid(), Host: host, Run: run, Started: time.Now().UTC()}
}

// ErrLocked is matched by a *LockedError.
var ErrLocked = errors.New("agent is locked by another process")

// LockedError says who holds an agent.
type LockedError struct {
	Agent  string
	Holder Holder // zero when the holder could not be read
}

func (e *LockedError) Error() string {
	h := e.Holder
	if h.PID == 0 {
		return fmt.Sprintf("agent %q is locked by another process", e.Agent)
	}
	return fmt.Sprintf("agent %q is locked by process %d on %s (run %s, started %s); wait for it to end or stop it",
		e.Agent, h.PID, h.Host, h.Run, h.Started.Local().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Lock is a held agent lock.
type Lock interface {
	Unlock() error
}

// fileLock is a flock on agents/<id>/lock. The file is never deleted: a
// deleted lock file would let two processes lock two different inodes.
type fileLock struct {
	fl   *flock.Flock
	path string
}

// Unlock clears the holder from the file, then releases the lock, so the
// next process to lose never reads a holder that has gone.
func (l *fileLock) Unlock() error {
	os.Truncate(l.path, 0)
	return l.fl.Unlock()
}

// lockDir takes the lock in dir without waiting on a live holder, and
// writes this process in as the holder.
func lockDir(agent, dir string, h Holder) (Lock, error) {
	path := filepath.Join(dir, "lock")
	fl := flock.New(path)
	if err := tryLock(agent, fl, path); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(h)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		fl.Unlock()
		return nil, fmt.Errorf("lock agent %q: %w", agent, err)
	}
	return &fileLock{fl: fl, path: path}, nil
}

// tryLock takes the lock, or fails with the holder. The holder writes
// itself into the file just after taking the lock and clears it just
// before releasing it, so for a moment the file may name no one: then the
// lock is tried again, briefly, and either taken or its holder read.
func tryLock(agent string, fl *flock.Flock, path string) error {
	for i := 0; i < 40; i++ {
		ok, err := fl.TryLock()
		if err != nil {
			return fmt.Errorf("lock agent %q: %w", agent, err)
		}
		if ok {
			return nil
		}
		if h, ok := readHolder(path); ok {
			return &LockedError{Agent: agent, Holder: h}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return &LockedError{Agent: agent}
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
	fl := flock.New(filepath.Join(dir, "lock"))
	ok, err := fl.TryLock()
	if err != nil || !ok {
		return err == nil
	}
	fl.Unlock()
	return false
}
