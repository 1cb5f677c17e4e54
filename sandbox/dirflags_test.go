package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Regression: path_open answered flags that open(2) answers by what is
// at the path differently on a plain mount and an overlay, and each
// unlike open(2) somewhere. On an overlay a directory opened to read with
// O_APPEND was EISDIR, and O_CREAT|O_EXCL of one EISDIR, not EEXIST; on
// a plain mount O_TRUNC opened a directory to read, and O_CREAT of a new
// name with a trailing slash was ENOENT. Both now answer as open(2) on
// Linux does.
func TestDirectoryOpenFlagsAnswerAsOpenDoes(t *testing.T) {
	want := map[string]string{
		"append": "0", "creat-excl": "20", "creat": "31", "trunc": "31", "trunc-directory": "31",
		"creat-slash-new": "31", "creat-slash-file": "31", "creat-slash-dir": "31", "creat-excl-file": "20",
	}
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			ws := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, "sub", "kept"), []byte("kept"), 0o644))
			must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("inside"), 0o644))
			before := tree(t, ws)
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			var ov *overlay.Overlay
			var staging string
			if kind == "overlay" {
				ov, staging = newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			var stdout, stderr bytes.Buffer
			p := Policy{Args: []string{"dirflags"}, Mounts: []Mount{mt}}
			if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v: %s", err, stderr.String())
			}
			got := results(stdout.String())
			for name, w := range want {
				if got["dirflags-"+name] != w {
					t.Errorf("%s: got errno %q, want %s", name, got["dirflags-"+name], w)
				}
			}
			if ov != nil {
				effects, err := ov.Effects()
				must(t, err)
				must(t, overlay.Apply(ws, staging, effects))
			}
			sameTree(t, "the workspace after the call", tree(t, ws), before)
		})
	}
}
