package sandbox

import (
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// diskCache is what a Runtime knows of the compile cache on disk, to keep
// it under its bound (see TrimCache).
type diskCache struct {
	max int64 // Config.CacheMax, or its default

	mu     sync.Mutex
	loaded map[string]bool // the files this process loaded (entryName)
	// unknown is set once a module loaded was not in the file entryName
	// names: a wazero that names its files otherwise, or a cache that
	// cannot be written. This process then keeps every file of its
	// version, not knowing which it loaded.
	unknown  atomic.Bool
	trimming sync.Mutex // one TrimCache at a time
	// checked is set once the cache's size was looked at as the Runtime
	// closed (see boundAtClose).
	checked atomic.Bool
}

// loaded notes, in the background, that the module's code, compiled as
// closeOnDone says, was loaded from the compile cache, or compiled into
// it, by a compile that began at start: it refreshes the time of the
// module's file, so that a bounded cache keeps the files used most
// recently, writes the file's name into the module's mark (see cached),
// and keeps the cache under its bound when the file is new.
func (r *Runtime) loaded(m *Module, code []byte, closeOnDone bool, start time.Time) {
	if r.cacheDir == "" {
		return
	}
	r.mu.Lock()
	entry := m.entry
	if entry == "" {
		start = m.born // a first load: compiling apart wrote the file since
	}
	r.mu.Unlock()
	r.background(func() {
		if entry == "" {
			entry = entryName(code, closeOnDone)
			r.mu.Lock()
			m.entry = entry
			r.mu.Unlock()
		}
		r.touchEntry(m.digest, entry, start)
	})
}

// touchEntry is the work of loaded, for the file entry.
func (r *Runtime) touchEntry(digest, entry string, start time.Time) {
	root, err := os.OpenRoot(r.cacheDir)
	if err != nil {
		return
	}
	defer root.Close()
	fi, err := root.Lstat(entry)
	if err != nil || !fi.Mode().IsRegular() {
		r.disk.unknown.Store(true)
		return
	}
	r.disk.mu.Lock()
	if r.disk.loaded == nil {
		r.disk.loaded = map[string]bool{}
	}
	r.disk.loaded[entry] = true
	r.disk.mu.Unlock()
	now := time.Now()
	if age := now.Sub(fi.ModTime()); age >= time.Minute || age <= -time.Minute {
		root.Chtimes(entry, now, now) // a cache that cannot be written keeps its time
	}
	r.markEntry(digest, entry)
	if !fi.ModTime().Before(start.Add(-time.Second)) {
		r.boundCache()
	}
}

// boundCache keeps the compile cache under its bound, unless another
// goroutine is at it: never removing a file this process loaded, nor,
// when it cannot tell which it loaded, a file of its wazero version.
// What cannot be removed is left: it costs the run nothing.
func (r *Runtime) boundCache() {
	if r.disk.max < 0 || !r.disk.trimming.TryLock() {
		return
	}
	defer r.disk.trimming.Unlock()
	r.disk.mu.Lock()
	keep := make(map[string]bool, len(r.disk.loaded))
	for e := range r.disk.loaded {
		keep[e] = true
	}
	r.disk.mu.Unlock()
	TrimCache(r.cacheDir, CacheTrim{Max: r.disk.max, keep: keep, keepVersion: r.disk.unknown.Load()})
}

// boundAtClose keeps the compile cache under its bound once, as the
// Runtime closes, if its compiled files take more than the bound and this
// process loaded a module from it: a bound lowered since the cache filled
// (CAIRN_CACHE_MAX) is kept by a process that only loads, which writes no
// file for boundCache to follow. By then every module the process loaded
// is known, and kept; a trim as soon as the loads under way had ended
// could come between one module's load and the next one's, and remove
// the next one's file, which then had to be compiled again.
func (r *Runtime) boundAtClose() {
	if r.cacheDir == "" || r.disk.max < 0 || !r.disk.checked.CompareAndSwap(false, true) {
		return
	}
	r.disk.mu.Lock()
	loaded := len(r.disk.loaded) > 0
	r.disk.mu.Unlock()
	if (loaded || r.disk.unknown.Load()) && compiledSize(r.cacheDir) > r.disk.max {
		r.boundCache()
	}
}
