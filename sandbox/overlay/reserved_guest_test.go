package overlay_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Regression: a temporary file of Apply that a crash left in the
// workspace (.cairn-apply-…) could be written, truncated, removed or
// renamed by a guest on an overlay; its effect named a reserved path, so
// the manifest was invalid and Apply refused all of the call's changes
// ("invalid effect manifest"). Such a file is now refused to every
// change (EACCES), as making one is, and the call's other changes apply.
func TestApplyLeftoverCannotBeChanged(t *testing.T) {
	leftover := "d/" + filepath.Base(overlay.TempName("d/f"))
	for _, op := range []string{
		"write:/work/" + leftover + ":guest",
		"append:/work/" + leftover + ":guest",
		"trunc:/work/" + leftover + ":0",
		"rm:/work/" + leftover,
		"mv:/work/" + leftover + ":/work/d/moved",
	} {
		t.Run(op, func(t *testing.T) {
			ws := t.TempDir()
			makeTree(t, ws, map[string]string{"d/": "", leftover: "half an apply"})
			ov, staging := newOverlay(t, ws)
			lines := ovprog(t, sandbox.Mount{Overlay: ov}, op, "write:/work/kept.txt:kept")
			if len(lines) != 2 || !strings.HasSuffix(lines[0], ": Permission denied") {
				t.Errorf("%s: %q, want it refused with Permission denied", op, lines)
			}
			effects, err := ov.Effects()
			must(t, err)
			if err := overlay.Apply(ws, staging, effects); err != nil {
				t.Fatalf("apply the call's changes: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(ws, "kept.txt")); err != nil || string(b) != "kept" {
				t.Errorf("kept.txt: %q, %v: want the call's other change applied", b, err)
			}
		})
	}
}
