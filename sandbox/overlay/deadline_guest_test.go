package overlay_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// A guest that removes a 16 GiB (sparse) workspace file, whose base the
// overlay hashes, is stopped at its deadline in the middle of that hash:
// the call ends with ErrDeadline and its overlay holds only what the
// guest changed before (a marker), not the removal, which the hash of the
// whole file would have recorded long after the deadline.
func TestRemovalOfHugeFileEndsAtTheDeadline(t *testing.T) {
	ws := t.TempDir()
	big := filepath.Join(ws, "big")
	must(t, os.WriteFile(big, nil, 0o644))
	must(t, os.Truncate(big, 16<<30))
	ov, _ := newOverlay(t, ws)
	p := sandbox.Policy{Args: []string{"write:/work/marker:x", "rm:/work/big"}, Timeout: 2 * time.Second,
		Mounts: []sandbox.Mount{{GuestPath: "/work", Overlay: ov}}}
	_, err := compile(t, "ovprog").Run(context.Background(), p, nil, io.Discard, io.Discard)
	if !errors.Is(err, sandbox.ErrDeadline) {
		t.Fatalf("the call: %v, want ErrDeadline", err)
	}
	effects, err := ov.Effects()
	must(t, err)
	var paths []string
	for _, e := range effects {
		paths = append(paths, e.Path+" "+string(e.Op))
	}
	if want := []string{"marker " + string(overlay.OpWrite)}; !slices.Equal(paths, want) {
		t.Errorf("effects of the stopped call: %q, want %q", paths, want)
	}
}
