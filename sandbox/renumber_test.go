package sandbox

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// renumberWant is what testdata/wat/renumber.wat prints with a budget of
// 10 open files: fds 0 to 2 are stdio, 3 the workspace, 4 and 5 its two
// files, so 4 to 13 are the most the budget allows. Every renumbering to
// a descriptor where no file is open is EBADF (8); onto an open one, or
// onto itself, it succeeds and the file still reads.
var renumberWant = map[string]string{
	"2147483647": "8", "2147483648": "8", "4294967295": "8", "16777216": "8", "1048576": "8",
	"4096": "8", "260": "8", "259": "8", "256": "8", "14": "8", "13": "8", "6": "8",
	"preopen-far": "8",
	"onto-open":   "0",
	"moved-from":  "8", // the file was moved onto the second
	"self":        "0",
	"read-self":   "0 inside",
	"close-far":   "8", // no descriptor was made there
	"reopen":      "0 4",
}

// Regression: fd_renumber(fd, 0x7fffffff) succeeded, and wazero grew the
// instance's descriptor table to that index: 16 GiB of host heap outside
// the guest's memory limit, and a descriptor past the call's budget of
// open files. Renumbering to where no file is open is now EBADF. (Should
// it succeed again, the guest stops at 2^24, whose 128 MiB fails the
// memory check without taking the machine's memory.)
func TestRenumberToFarDescriptorRefused(t *testing.T) {
	m, err := testRT.Compile(context.Background(), watBytes["renumber"])
	must(t, err)
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			ws := t.TempDir()
			must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("inside"), 0o644))
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			if kind == "overlay" {
				ov, _ := newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			var stdout strings.Builder
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ex, err := m.Run(context.Background(), Policy{Mounts: []Mount{mt}, MaxOpenFiles: 10}, nil, &stdout, &stdout)
			runtime.ReadMemStats(&after)
			if err != nil || ex.Code != 0 {
				t.Fatalf("run: %v, exit %d: %s", err, ex.Code, stdout.String())
			}
			// TotalAlloc counts what the call allocated even if the
			// heap had room for it; Sys, what the process took.
			alloc, grew := after.TotalAlloc-before.TotalAlloc, int64(after.Sys)-int64(before.Sys)
			t.Logf("the call allocated %d KiB of host heap; the process took %d KiB more", alloc>>10, grew>>10)
			if alloc > 16<<20 || grew > 16<<20 {
				t.Errorf("the call allocated %d MiB of host heap, the process took %d MiB more: want less than 16 MiB",
					alloc>>20, grew>>20)
			}
			got := results(stdout.String())
			if len(got) != len(renumberWant) {
				t.Errorf("the guest made %d attempts, want %d:\n%s", len(got), len(renumberWant), stdout.String())
			}
			for _, name := range slices.Sorted(maps.Keys(renumberWant)) {
				if want := renumberWant[name]; got[name] != want {
					t.Errorf("%s: got %q, want %q", name, got[name], want)
				}
			}
		})
	}
}
