package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// DefaultCacheMax is the size the compiled code in the compile cache on
// disk is kept under when Config.CacheMax is 0.
const DefaultCacheMax int64 = 512 << 20

// How old what TrimCache removes must be: a compiled file used (loaded or
// written) less than recentUse ago is kept whatever the bound, since a
// process may be loading it now; what a process leaves behind while it
// writes (a temporary file, a repair's directory) is removed once
// staleRenew old, when it can be no write in progress; and a directory
// of another wazero version goes once nothing in it was written or used
// for staleVersion.
const (
	recentUse    = 10 * time.Minute
	staleVersion = 7 * 24 * time.Hour
)

// CacheTrim says what TrimCache removes.
type CacheTrim struct {
	// Max is the bytes the compiled files may take, of every wazero
	// version; past it, those used least recently are removed, but those
	// used in the last ten minutes. Negative: no bound.
	Max int64
	// DryRun removes nothing, and reports what would be removed.
	DryRun bool

	// keep are files, by name under the cache, that the calling process
	// loaded: never removed. keepVersion keeps every file of this build's
	// wazero version, for a process that cannot tell which it loaded.
	keep        map[string]bool
	keepVersion bool
}

// CacheTrimmed is what TrimCache removed, or would remove.
type CacheTrimmed struct {
	Files []string `json:"files"` // paths under the cache directory
	Bytes int64    `json:"bytes"` // their size
	// Kept is the size of the compiled files left.
	Kept int64 `json:"kept_bytes"`
}

// TrimCache reclaims space in the compile cache in dir. It removes what
// processes left behind (temporary files, and repair directories, an
// hour old or more), each directory of another wazero version once
// nothing in it was written or used for a week, and then, while the
// compiled files take more than t.Max bytes, the file used least recently
// (cairn refreshes a file's time when it loads it), never one used in the
// last ten minutes. It never follows a symbolic link: a link in the cache
// is removed as itself, and nothing outside dir is touched. A file removed
// costs the next process that needs it compiling its module again, never
// a call: one already loaded is in memory, and wazero writes again what
// it does not find.
//
// # Errors
//
// A cache directory that cannot be read, and the first file that cannot
// be removed (a cache the user cannot write); what was removed before it
// is reported.
func TrimCache(dir string, t CacheTrim) (CacheTrimmed, error) {
	got := CacheTrimmed{Files: []string{}}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return got, fmt.Errorf("open the compile cache: %w", err)
	}
	defer root.Close()
	tr := &trimmer{root: root, t: t, now: time.Now(), got: &got}
	names, err := tr.list(".")
	if err != nil {
		return got, fmt.Errorf("read the compile cache %s: %w", dir, err)
	}
	var files []cacheFile
	for _, name := range names {
		files = append(files, tr.top(name)...)
	}
	tr.bound(tr.staleVersions(names, files))
	tr.staleMarks()
	if tr.err != nil {
		return got, tr.err
	}
	return got, nil
}

// compiledSize is the size of the compiled files in the compile cache in
// dir, of every wazero version, as TrimCache counts them before it
// removes anything; 0 for a cache that cannot be read. It removes
// nothing and follows no link.
func compiledSize(dir string) int64 {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0
	}
	defer root.Close()
	tr := &trimmer{root: root}
	names, _ := tr.list(".")
	var size int64
	for _, name := range names {
		if !strings.HasPrefix(name, "wazero-") {
			continue
		}
		files, _ := tr.list(name)
		for _, n := range files {
			if fi, err := root.Lstat(path.Join(name, n)); err == nil && fi.Mode().IsRegular() && !strings.HasSuffix(n, ".tmp") {
				size += fi.Size()
			}
		}
	}
	return size
}

// A cacheFile is a compiled file in the cache.
type cacheFile struct {
	name    string // under the cache directory
	size    int64
	used    time.Time
	current bool // of this build's wazero version
}

// trimmer is one TrimCache: what it removed, and the first removal that
// failed, after which it removes nothing more.
type trimmer struct {
	root *os.Root
	t    CacheTrim
	now  time.Time
	got  *CacheTrimmed
	err  error
	// removedCurrent: a file of this build's wazero version was
	// removed, which the marks may name (see staleMarks).
	removedCurrent bool
}

// list names what is in the directory name of the cache, sorted; a link
// to a directory is not read.
func (tr *trimmer) list(name string) ([]string, error) {
	if fi, err := tr.root.Lstat(name); err != nil || !fi.IsDir() {
		return nil, errors.New("not a directory")
	}
	f, err := tr.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}

// top removes what a process left behind at the cache's top, and returns
// the compiled files of a wazero directory.
func (tr *trimmer) top(name string) []cacheFile {
	fi, err := tr.root.Lstat(name)
	if err != nil {
		return nil
	}
	old := tr.now.Sub(fi.ModTime()) >= staleRenew
	switch {
	case strings.HasPrefix(name, "wazero-") && !fi.IsDir():
		tr.remove(name, fi) // not wazero's: see clearCacheDir
	case strings.HasPrefix(name, "wazero-"):
		return tr.compiled(name)
	case old && (strings.HasPrefix(name, renewPrefix) || strings.HasPrefix(name, "cairn-source-") ||
		strings.HasPrefix(name, "cairn-module-digests.") && strings.HasSuffix(name, ".tmp")):
		tr.remove(name, fi)
	}
	return nil
}

// compiled returns the compiled files in the wazero directory dir,
// removing what is not one: a temporary file an hour old, and anything
// that is not a regular file.
func (tr *trimmer) compiled(dir string) []cacheFile {
	names, _ := tr.list(dir)
	var files []cacheFile
	for _, n := range names {
		name := path.Join(dir, n)
		fi, err := tr.root.Lstat(name)
		switch {
		case err != nil:
		case !fi.Mode().IsRegular():
			tr.remove(name, fi)
		case strings.HasSuffix(n, ".tmp"):
			if tr.now.Sub(fi.ModTime()) >= staleRenew {
				tr.remove(name, fi)
			}
		default:
			files = append(files, cacheFile{name: name, size: fi.Size(), used: tr.usedAt(fi), current: dir == versionDir()})
		}
	}
	return files
}

// bound removes the files used least recently while the files take more
// than t.Max bytes.
func (tr *trimmer) bound(files []cacheFile) {
	var size int64
	for _, f := range files {
		size += f.size
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].used.Before(files[j].used) })
	for _, f := range files {
		if tr.t.Max < 0 || size <= tr.t.Max {
			break
		}
		if tr.now.Sub(f.used) < recentUse || tr.t.keep[f.name] || f.current && tr.t.keepVersion {
			continue
		}
		if tr.removeFile(f.name, f.size) {
			size -= f.size
			tr.removedCurrent = tr.removedCurrent || f.current
		}
	}
	tr.got.Kept = size
}

// staleVersions removes each directory of another wazero version that
// nothing in was written or used for staleVersion, and returns the files
// left.
func (tr *trimmer) staleVersions(names []string, files []cacheFile) []cacheFile {
	for _, name := range names {
		if !strings.HasPrefix(name, "wazero-") || name == versionDir() {
			continue
		}
		fi, err := tr.root.Lstat(name)
		if err != nil || !fi.IsDir() {
			continue
		}
		last, size := tr.usedAt(fi), int64(0)
		for _, f := range files {
			if path.Dir(f.name) == name {
				size += f.size
				if f.used.After(last) {
					last = f.used
				}
			}
		}
		if tr.now.Sub(last) < staleVersion || !tr.removeAll(name, size) {
			continue
		}
		left := files[:0]
		for _, f := range files {
			if path.Dir(f.name) != name {
				left = append(left, f)
			}
		}
		files = left
	}
	return files
}

// usedAt is when the file of fi was last used: its modification time,
// or long ago for a time in the future, from a clock that was ahead (as
// on a device without a clock of its own before it synced), which would
// otherwise keep the file for ever.
func (tr *trimmer) usedAt(fi fs.FileInfo) time.Time {
	if fi.ModTime().After(tr.now.Add(time.Minute)) {
		return time.Time{}
	}
	return fi.ModTime()
}

// remove removes name, a file, link or directory of what fi says.
func (tr *trimmer) remove(name string, fi fs.FileInfo) {
	if fi.IsDir() {
		tr.removeAll(name, tr.sizeOf(name))
		return
	}
	var size int64
	if fi.Mode().IsRegular() {
		size = fi.Size()
	}
	tr.removeFile(name, size)
}

// removeFile removes the file (or link) name, of size bytes, and reports
// whether it did.
func (tr *trimmer) removeFile(name string, size int64) bool {
	if tr.err != nil {
		return false
	}
	if !tr.t.DryRun {
		if err := tr.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			tr.err = fmt.Errorf("remove %s from the compile cache: %w", name, unwrapPath(err))
			return false
		}
	}
	tr.got.Files = append(tr.got.Files, name)
	tr.got.Bytes += size
	return true
}

// removeAll removes the directory name, whose files hold size bytes, and
// reports whether it did.
func (tr *trimmer) removeAll(name string, size int64) bool {
	if tr.err != nil {
		return false
	}
	if !tr.t.DryRun {
		if err := tr.root.RemoveAll(name); err != nil {
			tr.err = fmt.Errorf("remove %s from the compile cache: %w", name, unwrapPath(err))
			return false
		}
	}
	tr.got.Files = append(tr.got.Files, name+"/")
	tr.got.Bytes += size
	return true
}

// sizeOf is the size of the regular files in the directory name and the
// directories in it, links not followed.
func (tr *trimmer) sizeOf(name string) int64 {
	var size int64
	entries, _ := tr.list(name)
	for _, n := range entries {
		p := path.Join(name, n)
		fi, err := tr.root.Lstat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			size += tr.sizeOf(p)
		case fi.Mode().IsRegular():
			size += fi.Size()
		}
	}
	return size
}

// staleMarks removes the marks (see markCached) that name a file no
// longer there, which say nothing more, and, once a file of this version
// was removed, those that name none (an earlier cairn's), which say
// nothing either.
func (tr *trimmer) staleMarks() {
	names, err := tr.list(markDir)
	if err != nil || tr.t.DryRun {
		return
	}
	for _, n := range names {
		name := path.Join(markDir, n)
		if fi, err := tr.root.Lstat(name); err == nil && strings.HasSuffix(n, ".tmp") && tr.now.Sub(fi.ModTime()) >= staleRenew {
			tr.root.Remove(name) // a mark's write that did not end (markEntry)
			continue
		}
		entry, ok := readMark(tr.root, name)
		if !ok {
			continue
		}
		if entry == "" && !tr.removedCurrent || entry != "" && isRootEntry(tr.root, entry) {
			continue
		}
		if err := tr.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return // a cache that cannot be written: the files said so
		}
	}
}

// isRootEntry reports whether name is a regular file in root.
func isRootEntry(root *os.Root, name string) bool {
	fi, err := root.Lstat(name)
	return err == nil && fi.Mode().IsRegular()
}

// unwrapPath is err without the path os.Root puts in it, which is the
// name under the cache already given.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
