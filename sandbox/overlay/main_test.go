package overlay_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// The overlay's tests change workspaces through real guests,
// ../testdata/ovprog and fsprog, run by a real sandbox: built once for
// wasip1 and compiled once.
var guests = map[string]*sandbox.Module{}

func TestMain(m *testing.M) {
	sandbox.ServeCompile()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cairn-overlay-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	rt, err := sandbox.NewRuntime(ctx, sandbox.Config{CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer rt.Close(ctx)
	for _, name := range []string{"ovprog", "fsprog"} {
		if guests[name], err = buildGuest(ctx, rt, dir, name); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// buildGuest builds ../testdata/NAME for wasip1 and compiles it.
func buildGuest(ctx context.Context, rt *sandbox.Runtime, dir, name string) (*sandbox.Module, error) {
	out := filepath.Join(dir, name+".wasm")
	cmd := exec.Command("go", "build", "-o", out, "../testdata/"+name)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s for wasip1: %v\n%s", name, err, b)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	return rt.Compile(ctx, wasm)
}

func compile(_ testing.TB, name string) *sandbox.Module { return guests[name] }

// ovprog runs the guest's ops (see ../testdata/ovprog) with mt at /work
// and returns its lines of output.
func ovprog(t testing.TB, mt sandbox.Mount, ops ...string) []string {
	t.Helper()
	mt.GuestPath = "/work"
	var stdout, stderr bytes.Buffer
	ex, err := guests["ovprog"].Run(context.Background(), sandbox.Policy{Args: ops, Mounts: []sandbox.Mount{mt}}, nil, &stdout, &stderr)
	if err != nil || ex.Code != 0 {
		t.Fatalf("ovprog: %v, exit %d: %s%s", err, ex.Code, stdout.String(), stderr.String())
	}
	return strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
