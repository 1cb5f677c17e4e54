package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/guestbuild"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Shared by the package's tests: one engine (compiling a Go-built module
// costs about a second, so it is done once) and the hostile test module.
var (
	testEngine  *Engine
	testCache   string // the compile cache every test engine shares
	hostileWasm string // path of the packed hostile module
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cairn-host-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	defer pgtest.StopShared()
	// This machine's marks of fills of PostgreSQL stores are the tests'
	// own, not in the user's state directory.
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	ctx := context.Background()
	testCache = filepath.Join(dir, "cache")
	testEngine, err = NewEngine(ctx, Config{CacheDir: testCache})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer testEngine.Close(ctx)
	if hostileWasm, err = guestbuild.Build(dir, "./testdata/hostile",
		func(w []byte) ([]byte, error) { return testEngine.Pack(ctx, w, nil) }); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// fileEngine is an engine on a fresh file store.
func fileEngine(t testing.TB) (*Engine, checkpoint.Store) {
	t.Helper()
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	return eng, store
}
