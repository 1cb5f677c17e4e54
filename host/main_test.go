package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
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
	ctx := context.Background()
	testCache = filepath.Join(dir, "cache")
	testEngine, err = NewEngine(ctx, Config{CacheDir: testCache})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer testEngine.Close(ctx)
	if hostileWasm, err = buildGuest(ctx, dir, "./testdata/hostile"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// buildGuest builds a Go tool for wasip1 and packs its manifest, asking the
// module for it as `cairn tools pack` does.
func buildGuest(ctx context.Context, dir, pkg string) (string, error) {
	raw := filepath.Join(dir, filepath.Base(pkg)+".raw.wasm")
	cmd := exec.Command("go", "build", "-o", raw, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", pkg, err, out)
	}
	wasm, err := os.ReadFile(raw)
	if err != nil {
		return "", err
	}
	packed, err := testEngine.Pack(ctx, wasm, nil)
	if err != nil {
		return "", fmt.Errorf("pack %s: %w", pkg, err)
	}
	out := filepath.Join(dir, filepath.Base(pkg)+".wasm")
	return out, os.WriteFile(out, packed, 0o644)
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
