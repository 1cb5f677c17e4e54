package overlay_test

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// A guest opening a path of 2 MB ("a/" a million times) gets ENAMETOOLONG
// at once, on a plain mount and on an overlay, and the call ends well.
func TestHugePathFromAGuestIsNameTooLong(t *testing.T) {
	ov, _ := newOverlay(t, t.TempDir())
	for _, mt := range []sandbox.Mount{{HostPath: t.TempDir()}, {Overlay: ov}} {
		mt.GuestPath = "/work"
		var stdout bytes.Buffer
		p := sandbox.Policy{Args: []string{"deep:/work:1000000", "deep:/work:10"}, Mounts: []sandbox.Mount{mt}}
		ex, err := compile(t, "ovprog").Run(context.Background(), p, nil, &stdout, io.Discard)
		if err != nil || ex.Code != 0 {
			t.Fatalf("ovprog: %v, exit %d", err, ex.Code)
		}
		lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
		want := []string{"deep /work err File name too long", "deep /work err No such file or directory"}
		if !slices.Equal(lines, want) {
			t.Errorf("overlay %t: a path of 2 MB and a short one: %q, want %q", mt.Overlay != nil, lines, want)
		}
	}
}
