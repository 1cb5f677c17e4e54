package overlay_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Regression: the files a call read (Reads) had no bound. A guest that
// opened distinct names of one file, through links the workspace holds
// ("aaa…/bbb…/…/f" with each a link to "."), grew the host's memory by
// every name: 12,000 opens of 2 KiB names recorded 24 MiB, and nothing
// stopped a million. Past the bound of what a call saw, an open is refused
// (EIO) rather than recorded, the call fails with ErrSeenLimit, and what
// was recorded is what the call read.
func TestReadsOfManyLinkedNamesAreBounded(t *testing.T) {
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "f"), []byte("one file"), 0o644))
	for _, c := range "abcd" {
		must(t, os.Symlink(".", filepath.Join(ws, strings.Repeat(string(c), 250))))
	}
	ov, _ := newOverlay(t, ws)
	var stdout, stderr bytes.Buffer
	p := sandbox.Policy{Args: []string{"cat:/work/f", "loops:/work:12000"},
		Mounts: []sandbox.Mount{{GuestPath: "/work", Overlay: ov}}}
	if _, err := compile(t, "ovprog").Run(context.Background(), p, nil, &stdout, io.Discard); err != nil {
		t.Fatalf("ovprog: %v: %s", err, stderr.String())
	}
	names := 0
	reads := ov.Reads()
	for _, r := range reads {
		names += len(r)
	}
	if names > 16<<20 {
		t.Errorf("Reads holds %d paths of %d bytes, past the 16 MiB bound of what a call saw", len(reads), names)
	}
	if !slices.Contains(reads, "f") {
		t.Errorf("Reads lost the file read before the bound")
	}
	out := stdout.String()
	if !strings.Contains(out, "loops /work opened") || strings.Contains(out, "opened 12000") || !strings.HasSuffix(out, "err I/O error\n") {
		t.Errorf("the guest past the bound: %q, want its opens refused with EIO", out)
	}
	if err := ov.Exhausted(); !errors.Is(err, overlay.ErrSeenLimit) || !strings.Contains(err.Error(), "read") {
		t.Errorf("Exhausted: %v, want ErrSeenLimit saying the call read too much", err)
	}
}
