package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Shared by the package's tests: one runtime (a Go-built module takes about
// a second to compile) and the guests of testdata, built once for wasip1.
var (
	testRT     *Runtime
	guestsDir  string
	guestBytes = map[string][]byte{}
	watBytes   = map[string][]byte{}
)

func TestMain(m *testing.M) {
	if os.Getenv(touchEnv) != "" {
		touch(make([]byte, 32<<20))
		os.Exit(0)
	}
	ServeCompile()
	if wasm := os.Getenv(apartParentEnv); wasm != "" {
		os.Exit(compileApartHere(wasm))
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	var err error
	if guestsDir, err = os.MkdirTemp("", "cairn-sandbox-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(guestsDir)
	ctx := context.Background()
	if testRT, err = NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache")}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer testRT.Close(ctx)
	for _, g := range []string{"escape", "misbehave", "fsprog", "ovprog", "rightsprog", "pollprog", "netbig", "rawwasi"} {
		if guestBytes[g], err = buildGuest(g, "wasip1", "wasm"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := loadWat(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// loadWat reads the committed modules built from testdata/wat.
func loadWat() error {
	paths, err := filepath.Glob("testdata/wat/*.wasm")
	if err != nil {
		return err
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		watBytes[strings.TrimSuffix(filepath.Base(p), ".wasm")] = b
	}
	return nil
}

// buildGuest builds testdata/NAME for goos/goarch and returns the binary.
func buildGuest(name, goos, goarch string) ([]byte, error) {
	out := filepath.Join(guestsDir, name+"-"+goos)
	cmd := exec.Command("go", "build", "-o", out, "./testdata/"+name)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s for %s: %v\n%s", name, goos, err, b)
	}
	return os.ReadFile(out)
}

func compile(t testing.TB, name string) *Module {
	t.Helper()
	m, err := testRT.Compile(context.Background(), guestBytes[name])
	if err != nil {
		t.Fatal(err)
	}
	return m
}
