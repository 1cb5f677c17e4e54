package overlay

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
)

// Conflict is an effect whose path no longer holds what the call saw
// there (its Base) nor what the call left there (its New): something else
// changed it since. Now is what the path holds; Now.Hash is left zero when
// the size alone shows the difference.
type Conflict struct {
	Path      string
	Base, Now Version
	Reason    string
}

func (c Conflict) String() string { return c.Path + ": " + c.Reason }

// errConflict is wrapped by the error Apply returns when the workspace no
// longer matches the effects it was given.
var errConflict = errors.New("workspace changed under the call's effects")

// conflictError lists the conflicts that stopped Apply. Nothing was
// changed.
type conflictError struct{ Conflicts []Conflict }

func (e *conflictError) Error() string {
	msg := fmt.Sprintf("%v: %s", errConflict, e.Conflicts[0])
	if len(e.Conflicts) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(e.Conflicts)-1)
	}
	return msg
}

// Is makes errors.Is(err, errConflict) hold.
func (e *conflictError) Is(target error) bool { return target == errConflict }

// Check compares the workspace with the effects of a call and returns the
// effects Apply would refuse, as conflicts: a path that holds neither the
// effect's Base nor its New (changed, created or removed by someone else,
// or now a symlink or special file), a directory to be removed that holds
// entries the call did not remove, a path whose directory is gone. An
// effect already applied is no conflict, so Check holds after a crash
// mid-Apply too.
//
// # Errors
//
// An invalid manifest (see Effects.Validate), a workspace that cannot be read.
func Check(workspace string, effects Effects) ([]Conflict, error) {
	if err := effects.Validate(); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, fmt.Errorf("check effects: %w", err)
	}
	defer root.Close()
	_, conflicts, err := check(root, effects)
	return conflicts, err
}

// progress is how far an effect has been applied.
type progress uint8

const (
	atBase  progress = iota // not at all
	removed                 // what was there is gone; New is still to make
	done
)

// check says how far each effect has been applied, and which conflict.
func check(root *os.Root, effects Effects) ([]progress, []Conflict, error) {
	byPath := effects.byPath()
	states := make([]progress, len(effects))
	var conflicts []Conflict
	for i, e := range effects {
		now, other, err := observe(root, e.Path, e.Base, e.New)
		if err != nil {
			return nil, nil, fmt.Errorf("check %s: %w", e.Path, err)
		}
		var reason string
		switch {
		case other == "" && now == e.New:
			states[i] = done
			continue
		case other == "" && now == e.Base:
			states[i] = atBase
		case other == "" && !now.Exists && e.removes() && e.New.Exists:
			states[i] = removed
		default:
			reason = conflictReason(e.Base, now, other)
		}
		if reason == "" && states[i] == atBase && e.Base.Dir && !e.New.Dir {
			reason, err = leftBehind(root, e.Path, byPath)
		}
		if reason == "" && e.New.Exists {
			reason, err = parentGone(root, e.Path, byPath)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("check %s: %w", e.Path, err)
		}
		if reason != "" {
			conflicts = append(conflicts, Conflict{Path: e.Path, Base: e.Base, Now: now, Reason: reason})
		}
	}
	return states, conflicts, nil
}

func conflictReason(base, now Version, other string) string {
	switch {
	case other != "":
		return "it is now " + other
	case !base.Exists:
		return "something else created it after the call saw it"
	case !now.Exists:
		return "something else removed it after the call saw it"
	case base.Dir != now.Dir:
		return "something else replaced it after the call saw it"
	}
	return "something else changed it after the call saw it"
}

// leftBehind says why the directory p cannot be removed: it holds an entry
// the effects do not remove.
func leftBehind(root *os.Root, p string, byPath map[string]Effect) (string, error) {
	f, err := root.Open(p)
	if err != nil {
		return "", err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return "", err
	}
	for _, name := range names {
		if e, ok := byPath[p+"/"+name]; !ok || !e.removes() {
			return fmt.Sprintf("it holds %s, which the call did not see", name), nil
		}
	}
	return "", nil
}

// parentGone says why p cannot be made: its directory is gone and the
// effects do not make it.
func parentGone(root *os.Root, p string, byPath map[string]Effect) (string, error) {
	dir := path.Dir(p)
	if e, ok := byPath[dir]; dir == "." || ok && e.New.Dir {
		return "", nil
	}
	fi, err := root.Stat(dir)
	switch {
	case notExist(err):
		return "its directory " + dir + " is gone", nil
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "its directory " + dir + " is no longer a directory", nil
	}
	return "", nil
}

// observe is what the workspace holds at p, not following a final symlink.
// other names what it is when that is not a regular file with one name or
// a directory. A file is hashed only when its size is that of a file among
// want.
func observe(root *os.Root, p string, want ...Version) (now Version, other string, err error) {
	fi, err := root.Lstat(p)
	switch {
	case notExist(err):
		return Version{}, "", nil
	case err != nil:
		return Version{}, "", err
	case fi.IsDir():
		return dirVersion, "", nil
	case fi.Mode()&fs.ModeSymlink != 0:
		return Version{Exists: true}, "a symlink", nil
	case !fi.Mode().IsRegular():
		return Version{Exists: true}, "not a regular file", nil
	case guestfs.Allowed(fi) != 0:
		return Version{Exists: true}, "a file with more than one name", nil
	}
	for _, w := range want {
		if w.IsFile() && w.Size == fi.Size() {
			v, err := hashAt(root, p)
			return v, "", err
		}
	}
	return Version{Exists: true, Size: fi.Size()}, "", nil
}

// hashAt is the version of the regular file p of root.
func hashAt(root *os.Root, p string) (Version, error) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Version{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Version{}, err
	}
	if guestfs.Allowed(fi) != 0 || fi.IsDir() {
		return Version{}, fmt.Errorf("%s is not a regular file with one name", p)
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return Version{}, err
	}
	return fileVersion(h.Sum(nil), n), nil
}

// tempName is the temporary file beside p that Apply writes p's new
// content to. It is the same on every try, so a try after a crash removes
// what the crashed one left.
func tempName(p string) string {
	sum := sha256.Sum256([]byte(path.Base(p)))
	return path.Join(path.Dir(p), reservedPrefix+hex.EncodeToString(sum[:8]))
}
