// Package syncpoint names the points at which cairn makes a file or a
// directory durable, so that a test can model a power cut. Every fsync
// and fdatasync of the journal, snapshots, blobs, staged changes, kept
// changes and applied workspace files, and of the directories that name
// them, reports the path it synced to Synced once the sync has returned.
// An observer set with Observe sees each report; with none, a report
// costs one atomic load.
//
// The observer is process-wide: it is for tests of the whole stack (see
// host's power-cut test), one at a time.
package syncpoint

import "sync/atomic"

var observer atomic.Pointer[func(path string)]

// Observe makes f the observer of every sync until stop is called. f is
// called from the goroutine that synced, right after the sync returned
// without error; it must be safe for concurrent use.
func Observe(f func(path string)) (stop func()) {
	observer.Store(&f)
	return func() { observer.Store(nil) }
}

// Synced reports that path (a file or a directory) was synced.
func Synced(path string) {
	if o := observer.Load(); o != nil {
		(*o)(path)
	}
}
