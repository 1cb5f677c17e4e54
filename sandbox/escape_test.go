package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

const secret = "SECRET-OUTSIDE-THE-MOUNT"

// escapeFixture lays out a directory with outside.txt beside a workspace
// that holds links planted by the host, and returns both.
func escapeFixture(t *testing.T) (outside, ws string) {
	t.Helper()
	dir := t.TempDir()
	outside = filepath.Join(dir, "outside.txt")
	ws = filepath.Join(dir, "ws")
	must(t, os.WriteFile(outside, []byte(secret), 0o644))
	must(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("inside"), 0o644))
	must(t, os.Symlink("../outside.txt", filepath.Join(ws, "planted-link")))
	must(t, os.Symlink("..", filepath.Join(ws, "planted-dir")))
	must(t, os.Link(outside, filepath.Join(ws, "planted-hard")))
	must(t, syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644))
	return outside, ws
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// attempts parses the escape guest's output into attempt -> line.
func attempts(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, rest, _ := strings.Cut(line, " ")
		m[name] = rest
	}
	return m
}

// A hostile guest tries every way out of its workspace; none works, the
// host file outside is byte-for-byte unchanged, and its content never
// reaches the guest.
func TestEscapeSuite(t *testing.T) {
	outside, ws := escapeFixture(t)
	var stdout, stderr bytes.Buffer
	ex, err := compile(t, "escape").Run(context.Background(),
		Policy{Mounts: []Mount{{HostPath: ws, GuestPath: "/work"}}}, nil, &stdout, &stderr)
	if err != nil || ex.Code != 0 {
		t.Fatalf("run: %v, exit %d, stderr %s", err, ex.Code, stderr.String())
	}
	got := attempts(stdout.String())
	if len(got) < 18 {
		t.Fatalf("the guest made %d attempts, want 18:\n%s", len(got), stdout.String())
	}
	for name, line := range got {
		if name == "symlink-rel-write" && line == `ok ""` {
			continue // the link was refused, so this wrote a new regular file inside
		}
		if name == "inside-read" {
			if line != `ok "inside"` {
				t.Errorf("reading inside the workspace: %s", line)
			}
			continue
		}
		if !strings.HasPrefix(line, "refused") {
			t.Errorf("escape %s was not refused: %s", name, line)
		}
	}
	if strings.Contains(stdout.String(), secret) {
		t.Error("the guest read the file outside its workspace")
	}
	if b, _ := os.ReadFile(outside); string(b) != secret {
		t.Errorf("the file outside the workspace changed: %q", b)
	}
	for _, l := range []string{"link-rel", "link-dir", "link-abs", "hard"} {
		fi, err := os.Lstat(filepath.Join(ws, l))
		if err == nil && !fi.Mode().IsRegular() {
			t.Errorf("the guest made the link %s in the workspace", l)
		}
	}
}

// The same guest escapes wazero's own WithDirMount: the suite can fail,
// and this is why the workspace filesystem is ours.
func TestEscapeSuiteBreaksWithDirMount(t *testing.T) {
	outside, ws := escapeFixture(t)
	os.Remove(filepath.Join(ws, "fifo")) // wazero's mount would block on it
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var stdout bytes.Buffer
	cfg := wazero.NewModuleConfig().WithStdout(&stdout).
		WithFSConfig(wazero.NewFSConfig().WithDirMount(ws, "/work"))
	mod, err := rt.InstantiateWithConfig(ctx, guestBytes["escape"], cfg)
	if mod != nil {
		mod.Close(ctx)
	}
	if err != nil {
		t.Logf("run: %v", err)
	}
	b, _ := os.ReadFile(outside)
	if !strings.Contains(stdout.String(), secret) && string(b) == secret {
		t.Fatalf("the guest did not escape WithDirMount; the comparison no longer shows why workspaceFS exists:\n%s", stdout.String())
	}
}

// A read-only mount refuses every change, and the files are unchanged.
func TestReadOnlyMount(t *testing.T) {
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("keep"), 0o644))
	var stdout bytes.Buffer
	ex, err := compile(t, "misbehave").Run(context.Background(), Policy{Args: []string{"readonly"},
		Mounts: []Mount{{HostPath: ws, GuestPath: "/ro", ReadOnly: true}}}, nil, &stdout, &stdout)
	if err != nil || ex.Code != 0 {
		t.Fatalf("run: %v, exit %d: %s", err, ex.Code, stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 7 {
		t.Fatalf("want 7 results, got:\n%s", stdout.String())
	}
	for i, l := range lines {
		if l == "<nil>" {
			t.Errorf("operation %d succeeded on a read-only mount", i)
		}
	}
	entries, _ := os.ReadDir(ws)
	b, _ := os.ReadFile(filepath.Join(ws, "inside.txt"))
	if len(entries) != 1 || string(b) != "keep" {
		t.Fatalf("the read-only workspace changed: %d entries, inside.txt %q", len(entries), b)
	}
}
