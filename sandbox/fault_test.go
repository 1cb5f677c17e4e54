package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Regression: wazero's fd_write, fd_pwrite, fd_read, fd_pread, fd_seek,
// path_open, path_readlink and fd_readdir did their work and then
// answered EFAULT when the pointer for their answer (nwritten, nread, the
// new offset, the opened descriptor, bufused) was past the end of the
// guest's memory: the file was written, read past, sought, made or
// emptied, and the guest's buffer filled, though the guest was told the
// call failed. A bad iovec after good ones left those read into or
// written, and 2^29 + 1 iovecs were counted as one (8 bytes modulo 2^32).
// args_sizes_get and environ_sizes_get wrote their first answer and then
// answered EFAULT for the second. Each is now EFAULT with nothing done,
// on a plain mount and an overlay (EBADF first for a descriptor not
// open).
func TestFaultingCallDoesNothing(t *testing.T) {
	want := map[string]string{
		"fault-write-nwritten": "21 []", "fault-write-iovec": "21 []", "fault-pwrite-nwritten": "21 []",
		"fault-write-wrap": "21 []", "fault-stdout-nwritten": "21", "fault-badfd": "8",
		"fault-read-nread": "21 ---- 0", "fault-read-iovec": "21 ---- 0", "fault-pread-nread": "21 ----",
		"fault-seek": "21 0", "fault-open-creat": "21", "fault-open-trunc": "21",
		"fault-readlink": "21 ----", "fault-readdir": "21 0",
		"fault-args-sizes": "21 77", "fault-environ-sizes": "21 77",
		"fault-filestat-badfd": "8", "fault-filestat": "21",
	}
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			ws := t.TempDir()
			must(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("inside"), 0o644))
			must(t, os.Symlink("sub", filepath.Join(ws, "lsub")))
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			var ov *overlay.Overlay
			var staging string
			if kind == "overlay" {
				ov, staging = newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			var stdout, stderr bytes.Buffer
			p := Policy{Args: []string{"faults"}, Mounts: []Mount{mt}}
			if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v: %s", err, stderr.String())
			}
			if ov != nil {
				effects, err := ov.Effects()
				must(t, err)
				must(t, overlay.Apply(ws, staging, effects))
			}
			if strings.Contains(stdout.String(), "leak") {
				t.Errorf("a write whose nwritten was past memory wrote to stdout: %q", stdout.String())
			}
			got := results(stdout.String())
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s: got %q, want %q", name, got[name], w)
				}
			}
			if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "inside" {
				t.Errorf("inside.txt after a path_open with O_TRUNC that failed: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(ws, "made.txt")); err == nil {
				t.Errorf("a path_open with O_CREAT that failed made made.txt")
			}
		})
	}
}
