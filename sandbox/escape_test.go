package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// mountKinds are the two ways a workspace is served: the workspace
// filesystem on the directory itself, and an overlay of it.
var mountKinds = []string{"plain", "overlay"}

// escapeRun runs guest under the sandbox against a fresh fixture, its
// workspace served the way kind says, and returns its output, having
// checked what every escape case must hold: the secret never reached the
// guest, everything outside the workspace is byte-for-byte unchanged, and
// the guest made no link in the workspace. On an overlay it also checks
// that the workspace did not change at all during the call, and that
// applying the call's effects keeps all of that true.
func escapeRun(t *testing.T, guest []byte, kind string) (fixture, map[string]string) {
	t.Helper()
	f := newFixture(t, true)
	before := f.outsideHash(t)
	mounts := f.mounts()
	var ov *overlay.Overlay
	var staging string
	if kind == "overlay" {
		ov, staging = newOverlay(t, f.ws)
		mounts[0] = Mount{GuestPath: "/work", Overlay: ov}
	}
	wsBefore := tree(t, f.ws)
	m, err := testRT.Compile(context.Background(), guest)
	must(t, err)
	var stdout, stderr bytes.Buffer
	ex, err := m.Run(context.Background(), Policy{Mounts: mounts}, nil, &stdout, &stderr)
	if err != nil || ex.Code != 0 {
		t.Fatalf("run: %v, exit %d, stderr %s", err, ex.Code, stderr.String())
	}
	if strings.Contains(stdout.String(), secret) || strings.Contains(stderr.String(), secret) {
		t.Errorf("the guest read a file outside its mounts:\n%s", stdout.String())
	}
	if ov != nil {
		sameTree(t, "the workspace during the call", tree(t, f.ws), wsBefore)
		effects, err := ov.Effects()
		must(t, err)
		must(t, overlay.Apply(f.ws, staging, effects))
		for p, content := range tree(t, staging) {
			if strings.HasPrefix(content, "-> ") {
				t.Errorf("the staging directory holds the symlink %s %s", p, content)
			}
		}
	}
	if after := f.outsideHash(t); after != before {
		t.Error("the host filesystem outside the workspace changed")
	}
	f.checkWorkspaceLinks(t)
	return f, results(stdout.String())
}

// A Go guest tries every way out of its workspace that the standard
// library reaches; none works.
func TestEscapeGoGuest(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			_, got := escapeRun(t, guestBytes["escape"], kind)
			if len(got) < 18 {
				t.Fatalf("the guest made %d attempts, want 18: %v", len(got), got)
			}
			for name, line := range got {
				switch {
				case name == "symlink-rel-write" && line == `ok ""`:
					// The link was refused, so this made a new regular file inside.
				case name == "inside-read":
					if line != `ok "inside"` {
						t.Errorf("reading inside the workspace: %s", line)
					}
				case !strings.HasPrefix(line, "refused"):
					t.Errorf("escape %s was not refused: %s", name, line)
				}
			}
		})
	}
}

// hostileAllowed are the raw guest's attempts that succeed, with what they
// must print; every other attempt must get a non-zero errno.
var hostileAllowed = map[string]string{
	"readlink-planted": "0 ../outside.txt", // the link's text, not its target
	"environ":          "0 0",              // no variables
	"fd-exhaust":       "",                 // see fdExhaust
}

// fdExhaust is what the fd-exhaust attempt prints, by mount kind: EMFILE
// once the call holds its budget of open files (defaultMaxOpenFiles),
// less the mounts' roots that hold one. An overlay's root does; a plain
// mount's root is opened on the host only when the guest uses it (see
// workspaceFS.OpenFile), and this guest does not.
var fdExhaust = map[string]string{"plain": "33 256", "overlay": "33 255"}

// A guest calling raw WASI imports — path_open, path_symlink, path_link,
// path_rename, path_readlink, path_filestat_set_times,
// path_create_directory, path_unlink_file and more — gets out of neither
// mount and changes nothing outside the workspace or on the read-only mount.
func TestEscapeRawGuest(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			f, got := escapeRun(t, watBytes["hostile"], kind)
			if len(got) != 60 {
				t.Fatalf("the guest made %d attempts, want 60: %v", len(got), got)
			}
			for name, line := range got {
				if want, ok := hostileAllowed[name]; ok {
					if name == "fd-exhaust" {
						want = fdExhaust[kind]
					}
					if line != want {
						t.Errorf("%s: got %q, want %q", name, line, want)
					}
					continue
				}
				if strings.HasPrefix(line, "0") {
					t.Errorf("escape %s was not refused: %s", name, line)
				}
			}
			if b, err := os.ReadFile(filepath.Join(f.ws, "inside.txt")); err != nil || string(b) != "inside" {
				t.Errorf("inside.txt moved or changed: %q, %v", b, err)
			}
		})
	}
}

// Every attempt of the raw guest with the errno the workspace filesystem
// answers, the same on an overlay, so a change of rule shows up as a diff
// here.
func TestEscapeRawGuestErrnos(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) { checkErrnos(t, kind) })
	}
}

func checkErrnos(t *testing.T, kind string) {
	_, got := escapeRun(t, watBytes["hostile"], kind)
	for name, want := range map[string]string{
		"open-dotdot":        "63", // EPERM: os.Root refuses a path leading out
		"open-planted-link":  "63",
		"write-planted-hard": "2", // EACCES, and the file outside is not truncated
		"open-planted-hard":  "2", // EACCES: a file with two names
		// EACCES: its times are set through an open descriptor, and the
		// file outside keeps them (regression: set by path, they changed).
		"settimes-planted-hard": "2",
		"open-fifo":             "2",  // EACCES: not a regular file or directory
		"symlink-inside":        "63", // EPERM: no symlinks at all
		"link-inside":           "63", // EPERM: no hard links at all
		"write-ro":              "69", // EROFS
		"rename-within-ro":      "69",
		"settimes-ro":           "69",
		"open-planted-devnull":  "63",
	} {
		if got := strings.Fields(got[name]); len(got) == 0 || got[0] != want {
			t.Errorf("%s: errno %v, want %s", name, got, want)
		}
	}
}

// The same guests escape wazero's own WithDirMount: the suite can fail, and
// that is why the workspace filesystem is ours. A guest there follows a
// symlink it planted, or the host left, to the secret outside.
func TestEscapeSuiteBreaksWithDirMount(t *testing.T) {
	for _, g := range []struct {
		name string
		wasm []byte
	}{{"go", guestBytes["escape"]}, {"raw", watBytes["hostile"]}} {
		t.Run(g.name, func(t *testing.T) {
			f := newFixture(t, false) // wazero's mount blocks opening a FIFO
			before := f.outsideHash(t)
			out := runWithDirMount(t, g.wasm, f)
			if !strings.Contains(out, secret) && f.outsideHash(t) == before {
				t.Fatalf("the guest did not escape WithDirMount; the comparison no longer shows why workspaceFS exists:\n%s", out)
			}
		})
	}
}

// runWithDirMount runs wasm with wazero's own directory mounts in place of
// the sandbox's, and returns its stdout.
func runWithDirMount(t *testing.T, wasm []byte, f fixture) string {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var stdout bytes.Buffer
	cfg := wazero.NewModuleConfig().WithStdout(&stdout).
		WithFSConfig(wazero.NewFSConfig().WithDirMount(f.ws, "/work").WithReadOnlyDirMount(f.ro, "/ro"))
	mod, err := rt.InstantiateWithConfig(ctx, wasm, cfg)
	if mod != nil {
		mod.Close(ctx)
	}
	if err != nil {
		t.Logf("run: %v", err)
	}
	return stdout.String()
}

// readOnlyResults runs the misbehave guest's seven attempts to change a
// read-only mount (mt, at /ro) and returns what each got.
func readOnlyResults(t *testing.T, mt Mount) []string {
	t.Helper()
	mt.GuestPath, mt.ReadOnly = "/ro", true
	var stdout bytes.Buffer
	ex, err := compile(t, "misbehave").Run(context.Background(), Policy{Args: []string{"readonly"},
		Mounts: []Mount{mt}}, nil, &stdout, &stdout)
	if err != nil || ex.Code != 0 {
		t.Fatalf("run: %v, exit %d: %s", err, ex.Code, stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 7 {
		t.Fatalf("want 7 results, got:\n%s", stdout.String())
	}
	return lines
}

// A read-only mount refuses every change a Go guest makes, and its files
// are unchanged.
func TestReadOnlyMount(t *testing.T) {
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("keep"), 0o644))
	for i, l := range readOnlyResults(t, Mount{HostPath: ws}) {
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

// A read-only overlay mount refuses every change, and stages nothing.
func TestOverlayReadOnly(t *testing.T) {
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("keep"), 0o644))
	staging := filepath.Join(t.TempDir(), "staging")
	ov, err := overlay.New(ws, staging)
	must(t, err)
	defer ov.Close()
	for i, l := range readOnlyResults(t, Mount{Overlay: ov}) {
		if !strings.Contains(l, "Read-only file system") {
			t.Errorf("operation %d: %s", i, l)
		}
	}
	effects, err := ov.Effects()
	must(t, err)
	if entries, _ := os.ReadDir(staging); len(effects) != 0 || len(entries) != 0 {
		t.Errorf("a read-only call staged %d files and %d effects", len(entries), len(effects))
	}
}
