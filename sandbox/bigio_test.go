package sandbox

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Regression: one fd_write of more than 4 GiB (4,097 iovecs of 1 MiB, all
// one buffer) told the guest it wrote 1 MiB, its count taken modulo 2^32
// where WASI's is 32 bits, and fd_read and fd_pread of as much the same.
// A read or write moves at most 0x7ffff000 bytes in one call, as Linux's
// read(2), write(2), their vectored and positioned forms do (MAX_RW_COUNT):
// a short one, whose count is exact, and the guest's iovecs are left as
// they were.
func TestHugeReadOrWriteIsShortAndCountedExactly(t *testing.T) {
	const want = "0 2147479552 true"
	m := compile(t, "rawwasi")
	ws := t.TempDir()
	big, err := os.Create(filepath.Join(ws, "big"))
	must(t, err)
	must(t, big.Truncate(5<<30)) // sparse: reading it costs no disk
	must(t, big.Close())
	for _, op := range []string{"write", "read", "pread"} {
		t.Run(op, func(t *testing.T) {
			var out bytes.Buffer
			p := Policy{Args: []string{"bigio", op, "4097"}, Mounts: []Mount{{HostPath: ws, GuestPath: "/work"}}}
			if _, err := m.Run(context.Background(), p, nil, &out, io.Discard); err != nil {
				t.Fatalf("run: %v", err)
			}
			if got := results(out.String())["bigio-"+op]; got != want {
				t.Errorf("errno and count %q, want %q", got, want)
			}
		})
	}
}
