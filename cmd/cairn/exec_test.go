package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wasiGuest builds a Go program of the sandbox's testdata for wasip1 and
// returns the module's path.
func wasiGuest(t *testing.T, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name+".wasm")
	buildWasi(t, "github.com/cairnrun/cairn/sandbox/testdata/"+name, out)
	return out
}

// buildWasi builds the Go program pkg for wasip1 into out.
func buildWasi(t *testing.T, pkg, out string) {
	t.Helper()
	placeBuilt(t, pkg, out, "GOOS=wasip1", "GOARCH=wasm")
}

// cairn exec runs an ordinary WASI program on a mounted directory: it
// lists, reads and writes there, and its exit status is cairn's.
func TestExecFiles(t *testing.T) {
	mod := wasiGuest(t, "fsprog")
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "gone.txt"), []byte("x"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha"), 0o644))

	code, out, errOut := cairn(t, "exec", "--cache", cacheForTests(t), "--dir", dir+":/data", mod, "/data", "3")
	if code != 3 {
		t.Fatalf("exit %d, want the module's 3; stderr %s", code, errOut)
	}
	for _, want := range []string{`/data/a.txt ---------- 5 "alpha"`, `/data/made/moved.txt ---------- 18 "written by fsprog\n"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made", "moved.txt")); err != nil || string(b) != "written by fsprog\n" {
		t.Errorf("the file the module wrote: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("the file the module removed is still there: %v", err)
	}
}

// A read-only --dir refuses the program's first write, and nothing changes.
func TestExecReadOnlyDir(t *testing.T) {
	mod := wasiGuest(t, "fsprog")
	dir := t.TempDir()
	code, out, _ := cairn(t, "exec", "--cache", cacheForTests(t), "--dir", dir+":/data:ro", mod, "/data")
	if code != 1 || !strings.Contains(out, "write:") {
		t.Fatalf("exit %d, output %q: want the program's failed write", code, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the read-only directory changed: %v", entries)
	}
}

// stdin and stdout pass through, the environment is only --env, and a
// non-zero exit of the module is cairn's exit code.
func TestExecStreamsAndEnv(t *testing.T) {
	mod := wasiGuest(t, "misbehave")
	t.Setenv("CAIRN_HOST_SECRET", "do-not-leak")
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		out   string
	}{
		{"stdin passes through", []string{mod, "stdin"}, "to and fro\n", 0, "to and fro\n"},
		{"environment is only --env", []string{"--env", "ONLY=this", mod, "env"}, "", 0, "ONLY=this\n"},
		{"exit status is cairn's", []string{mod, "exit"}, "", 7, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			app := newApp(strings.NewReader(tt.stdin), &stdout, &stderr)
			err := app.Run(append([]string{"cairn", "exec", "--cache", cacheForTests(t)}, tt.args...))
			if code := codeOf(err); code != tt.code || stdout.String() != tt.out {
				t.Fatalf("exit %d (%v), stdout %q; want %d, %q", code, err, stdout.String(), tt.code, tt.out)
			}
		})
	}
}

func codeOf(err error) int {
	if err == nil {
		return exitDone
	}
	if ee, ok := err.(*exitError); ok {
		return ee.code
	}
	return exitFailed
}

func TestExecUsage(t *testing.T) {
	for _, args := range [][]string{
		{"exec"},
		{"exec", "--dir", "/no/such/dir", "m.wasm"},
		{"exec", "--dir", "a:b:c:ro", "m.wasm"},
		{"exec", "--env", "NOEQUALS", "m.wasm"},
		{"exec", "--memory", "lots", "m.wasm"},
	} {
		if code, _, _ := cairn(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// parseMount reads HOST[:GUEST][:ro].
func TestParseMount(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		in, guest string
		ro        bool
	}{
		{dir, dir, false},
		{dir + ":/w", "/w", false},
		{dir + ":/w:ro", "/w", true},
		{dir + ":ro", dir, true},
		{dir + ":/w:rw", "/w", false},
	}
	for _, tt := range tests {
		m, err := parseMount(tt.in)
		if err != nil || m.HostPath != dir || m.GuestPath != tt.guest || m.ReadOnly != tt.ro {
			t.Errorf("%q: got %+v, %v", tt.in, m, err)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
