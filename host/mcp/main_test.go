package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/guestbuild"
)

// Shared by the package's tests: the compile cache and the packed test
// modules (building a Go guest takes seconds, so it is done once, by the
// first test that needs them; fuzzing needs none).
var (
	testCache   string
	toolsWasm   string // testdata/mcptools
	hostileWasm string // the host's hostile module, to try escapes through MCP
	buildOnce   sync.Once
	buildErr    error
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cairn-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testCache = filepath.Join(dir, "cache")
	code := m.Run()
	os.RemoveAll(dir)
	return code
}

// testModules builds and packs the test modules once.
func testModules(t testing.TB) {
	t.Helper()
	buildOnce.Do(func() {
		ctx := context.Background()
		eng, err := host.NewEngine(ctx, host.Config{CacheDir: testCache})
		if err != nil {
			buildErr = err
			return
		}
		defer eng.Close(ctx)
		dir := filepath.Dir(testCache)
		for pkg, out := range map[string]*string{"./testdata/mcptools": &toolsWasm, "../testdata/hostile": &hostileWasm} {
			if *out, err = guestbuild.Build(dir, pkg, func(w []byte) ([]byte, error) { return eng.Pack(ctx, w, nil) }); err != nil {
				buildErr = err
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}
