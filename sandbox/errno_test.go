package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Regression: what the host's filesystem refused with an errno wazero's
// set has no name for reached the guest as EIO: a write or size past the
// largest file a filesystem holds (EFBIG, 22, here of the test's
// directory, ext4 or another whose largest file is smaller than 2^62
// bytes), a write to a full disk (ENOSPC, 51). Each now reaches it as its
// own errno, as on Linux, on a plain mount and on an overlay whose
// staging directory is on the full disk; and an open past the call's
// budget of open files is EMFILE (33), as open(2) says past the process's
// limit, where it was EAGAIN. The full disk is a tmpfs of 1 MiB, which
// only root may mount. On an overlay a file past the largest is past the
// staging limit first, which is EDQUOT (19, see
// TestWritePastTheStagingLimitIsEDQUOT).
func TestHostErrnosReachTheGuest(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			largest := map[string]string{"full-open": "0", "full-pwrite-past-largest": "22",
				"full-setsize-past-largest": "22", "full-files": "33"}
			if kind == "overlay" {
				largest["full-pwrite-past-largest"], largest["full-setsize-past-largest"] = "19", "19"
			}
			wantErrnos(t, fullRun(t, kind, t.TempDir(), "0"), largest)
			wantErrnos(t, fullRun(t, kind, smallDisk(t), "64"), map[string]string{"full-write": "51"})
		})
	}
}

// Regression: a write past an overlay's staging limit reached the guest
// as EIO, which says the disk failed; it is EDQUOT, as write(2) answers
// past a user's quota, and the call still fails with ErrStagingLimit for
// the host.
func TestWritePastTheStagingLimitIsEDQUOT(t *testing.T) {
	ov, _ := newOverlay(t, t.TempDir())
	p := Policy{Args: []string{"full", "4"}, Mounts: []Mount{{GuestPath: "/work", Overlay: ov}}, StagingLimit: 2 << 20}
	var out, errOut bytes.Buffer
	if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &out, &errOut); err != nil {
		t.Fatalf("run: %v: %s", err, errOut.String())
	}
	wantErrnos(t, results(out.String()), map[string]string{"full-write": "19"})
	if err := stagingExhausted(p); !errors.Is(err, overlay.ErrStagingLimit) {
		t.Errorf("the call's error: %v, want ErrStagingLimit", err)
	}
}

// fullRun runs the guest's full with writes of 1 MiB, on disk: mounted
// there, or on an overlay staged there.
func fullRun(t *testing.T, kind, disk, writes string) map[string]string {
	t.Helper()
	mt := Mount{HostPath: disk, GuestPath: "/work"}
	if kind == "overlay" {
		ov, err := overlayStagedIn(t, t.TempDir(), filepath.Join(disk, "staging"))
		must(t, err)
		mt = Mount{GuestPath: "/work", Overlay: ov}
	}
	var out, errOut bytes.Buffer
	p := Policy{Args: []string{"full", writes}, Mounts: []Mount{mt}, MaxOpenFiles: 8}
	if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &out, &errOut); err != nil {
		t.Fatalf("run: %v: %s", err, errOut.String())
	}
	return results(out.String())
}

func wantErrnos(t *testing.T, got, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: errno %q, want %s", name, got[name], w)
		}
	}
}

// smallDisk mounts a tmpfs of 1 MiB for the test, or skips it.
func smallDisk(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("no tmpfs to fill (%v): mounting one needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// overlayStagedIn makes an overlay of ws staged in staging.
func overlayStagedIn(t *testing.T, ws, staging string) (*overlay.Overlay, error) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(staging), 0o755))
	ov, err := overlay.New(ws, staging)
	if err == nil {
		t.Cleanup(func() { ov.Close() })
	}
	return ov, err
}
