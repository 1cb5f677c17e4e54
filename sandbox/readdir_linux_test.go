package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// linuxListing lists dir with getdents(2), from where lseek(2) puts it at
// off, and returns the names and the d_off of each (where the next entry
// is).
func linuxListing(t *testing.T, dir string, off int64) (names []string, offs []int64) {
	t.Helper()
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	must(t, err)
	defer syscall.Close(fd)
	_, err = syscall.Seek(fd, off, 0)
	must(t, err)
	buf := make([]byte, 64) // a few entries a call, as a small readdir buffer
	for {
		n, err := syscall.Getdents(fd, buf)
		must(t, err)
		if n == 0 {
			return names, offs
		}
		for p := 0; p < n; {
			reclen := int(binary.LittleEndian.Uint16(buf[p+16:]))
			name := buf[p+19 : p+reclen]
			names = append(names, string(name[:bytes.IndexByte(name, 0)]))
			offs = append(offs, int64(binary.LittleEndian.Uint64(buf[p+8:])))
			p += reclen
		}
	}
}

// Regression: fd_readdir from a cookie past the entries a descriptor had
// listed so far (a fresh descriptor, a cookie past the end, or 2^63), or
// before those wazero keeps of its last listing, was ENOENT. Linux, whose
// getdents(2) lists from where lseek(2) to an entry's d_off puts it, lists
// the entries after that one, and nothing (0 bytes) past the end, as
// wasmtime's fd_readdir does of its cookies; so does cairn's, on a plain
// mount and an overlay.
func TestReaddirCookieAnswersAsLinux(t *testing.T) {
	linux := t.TempDir()
	for i := range 30 {
		must(t, os.WriteFile(filepath.Join(linux, fmt.Sprintf("f%02d", i)), nil, 0o644))
	}
	all, offs := linuxListing(t, linux, 0)
	if len(all) != 32 {
		t.Fatalf("Linux listed %d entries, want 32: %q", len(all), all)
	}
	for _, i := range []int{9, 30, 31} {
		if got, _ := linuxListing(t, linux, offs[i]); !slices.Equal(got, all[i+1:]) {
			t.Errorf("Linux from the d_off of entry %d: %q, want %q", i, got, all[i+1:])
		}
	}
	if got, _ := linuxListing(t, linux, math.MaxInt64); len(got) != 0 {
		t.Errorf("Linux past the end: %q, want nothing", got)
	}
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			ws := t.TempDir()
			for i := range 30 {
				must(t, os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%02d", i)), nil, 0o644))
			}
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			if kind == "overlay" {
				ov, _ := newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			var stdout, stderr bytes.Buffer
			p := Policy{Args: []string{"readdir"}, Mounts: []Mount{mt}}
			if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v: %s", err, stderr.String())
			}
			got := results(stdout.String())
			// errno, bytes used, and whether the names are those from
			// the cookie on.
			for name, want := range map[string]string{
				"readdir-all":           "0 32",
				"readdir-ahead":         "0 594 true",
				"readdir-ahead-last":    "0 27 true",
				"readdir-at-end-fresh":  "0 0 true",
				"readdir-past-end":      "0 0 true",
				"readdir-huge":          "0 0 true",
				"readdir-max":           "0 0 true",
				"readdir-behind":        "0 729 true",
				"readdir-past-end-then": "0 0 true",
				"readdir-rewound":       "0 861 true",
				"readdir-ahead-small":   "0 24",
				// fd_seek of a directory, to 0 from its start and from
				// where it is, is EISDIR: WASI gives a directory no
				// position (docs/wasi.md).
				"readdir-seek": "31 31",
			} {
				if got[name] != want {
					t.Errorf("%s: got %q, want %q", name, got[name], want)
				}
			}
			if w, ok := got["readdir-walk"]; ok {
				t.Errorf("listing on with buffers of 64 bytes failed: errno and cookie %s", w)
			}
		})
	}
}
