package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairnrun/cairn/internal/lockfile"
	"golang.org/x/sys/unix"
)

// FillMarks keeps marks of fills under way: a process that fills a
// directory outside the store (a workspace a fork or a resume on another
// node fills beside its place, see package host) marks it here first,
// durably, naming the directory, and holds the mark until what it filled
// is in place or taken back. A mark that no process holds was left by one
// that was killed, and names what it left, wherever that is. FileStore
// keeps its marks in the store (fills/); a store that keeps none does not
// implement FillMarks, and its fills are marked on the machine that fills
// (MarkDir).
type FillMarks interface {
	// MarkFill records, durably, the fill m, and holds the mark until
	// release is called, which removes it, unless keep says that the
	// fill left something for a sweep to remove, and lets go of it.
	MarkFill(m FillMark) (release func(keep bool) error, err error)
	// LeftFills calls sweep with each mark no process holds and, unless
	// dryRun, removes the mark once sweep returns nil for it. Its error
	// is the first that kept it from reading the marks; what sweep
	// returns keeps only that mark.
	LeftFills(sweep func(m FillMark) error, dryRun bool) error
}

// FillMark is what a mark of a fill names: the directory it fills (an
// absolute path), the directories it makes for it that were not there
// when it was marked, outermost first, which a fill killed before it
// filled anything may leave empty, and the agent whose workspace Dir is
// to be, if any: once the agent's workspace, Dir is the agent's, empty or
// not.
type FillMark struct {
	Dir   string   `json:"dir"`
	Makes []string `json:"makes,omitempty"`
	Agent string   `json:"agent,omitempty"`
}

var (
	_ FillMarks = (*FileStore)(nil)
	_ FillMarks = (*MarkDir)(nil)
)

// fillsDir is the store's directory of fill marks (a MarkDir).
const fillsDir = "fills"

// MarkFill marks m in the store's fills/ (see MarkDir.MarkFill).
func (s *FileStore) MarkFill(m FillMark) (func(keep bool) error, error) {
	return NewMarkDir(filepath.Join(s.dir, fillsDir)).MarkFill(m)
}

// LeftFills reads the store's fills/ (see MarkDir.LeftFills).
func (s *FileStore) LeftFills(sweep func(m FillMark) error, dryRun bool) error {
	return NewMarkDir(filepath.Join(s.dir, fillsDir)).LeftFills(sweep, dryRun)
}

// MarkDir keeps marks of fills in a directory: <random>.fill, each a
// FillMark in JSON, flocked by the process that fills; "*.tmp" while one
// is made. The directory is made (mode 0700, durably) by the first mark.
// Safe for concurrent use, by any number of processes.
type MarkDir struct{ dir string }

// NewMarkDir is the MarkDir of dir, which need not exist yet.
func NewMarkDir(dir string) *MarkDir { return &MarkDir{dir: dir} }

// MarkFill writes <random>.fill atomically (temp file, fsync, rename,
// fsync of the directory, and of the parent of each directory it makes
// to hold it), holding its
// flock from before the rename until release, so that no sweep takes a
// mark whose fill is alive.
func (d *MarkDir) MarkFill(fm FillMark) (func(keep bool) error, error) {
	dir, marks := fm.Dir, d.dir
	if err := makeDurable(marks); err != nil {
		return nil, fmt.Errorf("mark the fill of %s: %w", dir, err)
	}
	data, err := json.Marshal(fm)
	if err != nil {
		return nil, err
	}
	f, err := heldTemp(marks)
	if err != nil {
		return nil, fmt.Errorf("mark the fill of %s: %w", dir, err)
	}
	name := strings.TrimSuffix(f.Name(), ".tmp") + ".fill"
	_, err = f.Write(data)
	if err = errors.Join(err, f.Sync()); err == nil {
		if err = os.Rename(f.Name(), name); err == nil {
			err = syncDir(marks)
		}
	}
	if err != nil {
		os.Remove(f.Name())
		os.Remove(name)
		f.Close()
		return nil, fmt.Errorf("mark the fill of %s: %w", dir, err)
	}
	// The removal is not synced: a mark that comes back after a crash
	// names a fill that is in place or gone, and the next sweep drops it.
	return func(keep bool) error {
		var err error
		if !keep {
			if err = os.Remove(name); errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		}
		return errors.Join(err, f.Close())
	}, nil
}

// makeDurable makes dir (mode 0700), and the directories above it that
// are not there, and syncs the parent of each it made, outermost first,
// so that the name of each is durable before anything is made in it.
func makeDurable(dir string) error {
	var made []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		made = append(made, p)
	}
	if len(made) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for i := len(made) - 1; i >= 0; i-- {
		if err := syncDir(filepath.Dir(made[i])); err != nil {
			return err
		}
	}
	return nil
}

// heldTemp makes a new temp file in dir and takes its flock. A sweep
// that removed it between its making and the flock (it took the flock of
// a temp file no process held) makes it be made again.
func heldTemp(dir string) (*os.File, error) {
	for {
		f, err := os.CreateTemp(dir, "*.tmp")
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil && lockfile.Names(f.Name(), f) {
			return f, nil
		}
		f.Close()
	}
}

// LeftFills reads the directory and calls sweep for each mark whose flock
// it takes. A temp file no process holds is a mark that was never made, its
// fill not begun: it is removed (unless dryRun), and sweep is not called.
// A mark that cannot be read names nothing, and is removed the same way.
func (d *MarkDir) LeftFills(sweep func(m FillMark) error, dryRun bool) error {
	marks := d.dir
	entries, err := os.ReadDir(marks)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the marks of fills: %w", err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			leftFill(filepath.Join(marks, e.Name()), sweep, dryRun)
		}
	}
	return nil
}

// leftFill sweeps what the mark at path names, unless a process holds it.
func leftFill(path string, sweep func(m FillMark) error, dryRun bool) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil || !lockfile.Names(path, f) {
		return // a live fill's, or removed meanwhile
	}
	var m FillMark
	if strings.HasSuffix(path, ".fill") {
		data, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(data, &m) == nil && filepath.IsAbs(m.Dir) {
			if sweep(m) != nil {
				return
			}
		}
	}
	if !dryRun {
		os.Remove(path)
	}
}
