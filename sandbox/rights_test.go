package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// rightsWant is what testdata/rightsprog prints: Go's os.Root creates and
// truncates files in a directory it opened as a read-only file; a file
// opened to read has FD_READ and not FD_WRITE, and writing it is
// ENOTCAPABLE (76); a file opened with O_SYNC says so; a right dropped
// with fd_fdstat_set_rights is refused and cannot be taken back; a
// directory whose inheriting rights lack FD_WRITE opens a file asked for
// with FD_WRITE without it, and one without PATH_FILESTAT_SET_SIZE cannot
// truncate (and cannot get it back).
const rightsWant = `root ok
read-only true false 76
sync true
narrow 0 76 76
inherit 0 0 false 76
trunc 0 76 76
`

// Regression: wazero reported every right for every file, did not
// implement fd_fdstat_set_rights (ENOSYS), and did not report the SYNC
// flags a file was opened with. A descriptor now has the rights it was
// opened with, narrowed rights are refused (ENOTCAPABLE), and no
// descriptor gains a right, through fd_fdstat_set_rights or path_open.
func TestRightsNarrowedAndEnforced(t *testing.T) {
	m := compile(t, "rightsprog")
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			ws := t.TempDir()
			must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("inside"), 0o644))
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			var ov *overlay.Overlay
			if kind == "overlay" {
				ov, _ = newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			var stdout, stderr bytes.Buffer
			ex, err := m.Run(context.Background(), Policy{Args: []string{"/work"}, Mounts: []Mount{mt}}, nil, &stdout, &stderr)
			if err != nil || ex.Code != 0 {
				t.Fatalf("run: %v, exit %d: %s%s", err, ex.Code, stdout.String(), stderr.String())
			}
			if got := stdout.String(); got != rightsWant {
				t.Errorf("the guest printed\n%s\nwant\n%s", got, rightsWant)
			}
			if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "inside" {
				t.Errorf("inside.txt holds %q (%v), want it unchanged", b, err)
			}
			if ov != nil {
				effects, err := ov.Effects()
				must(t, err)
				for _, e := range effects {
					if e.Path == "inside.txt" {
						t.Errorf("the overlay changed inside.txt: %+v", e)
					}
				}
			}
		})
	}
}

// The records of an instance's descriptors go when it is closed: a
// record keeps its instance, memory and all.
func TestRightsRecordsGoWithTheInstance(t *testing.T) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache")})
	must(t, err)
	defer rt.Close(ctx)
	m, err := rt.Compile(ctx, guestBytes["rightsprog"])
	must(t, err)
	for range 3 {
		ws := t.TempDir()
		must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("inside"), 0o644))
		var out bytes.Buffer
		p := Policy{Args: []string{"/work"}, Mounts: []Mount{{HostPath: ws, GuestPath: "/work"}}}
		if ex, err := m.Run(ctx, p, nil, &out, &out); err != nil || ex.Code != 0 {
			t.Fatalf("run: %v, exit %d: %s", err, ex.Code, out.String())
		}
	}
	n := 0
	rt.fds.instances.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Errorf("the records of %d closed instances are kept", n)
	}
}
