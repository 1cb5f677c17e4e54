package sandbox

import (
	"context"

	"github.com/tetratelabs/wazero"
)

// restoreCacheDir makes the compile cache's directories again, private to
// the user, if they were removed since the Runtime made them (a cache
// cleaned while the process waited). wazero writes what it compiles into
// them and fails the compile when it cannot; after Trim, that would fail
// every call of a module whose code was in memory before. Failing here is
// left to the compile to report.
func (r *Runtime) restoreCacheDir() {
	if r.cacheDir == "" {
		return
	}
	if err := privateDir(r.cacheDir); err != nil {
		return
	}
	// wazero makes its own directory under it, named for its version.
	if c, err := wazero.NewCompilationCacheWithDir(r.cacheDir); err == nil {
		c.Close(context.Background())
	}
}
