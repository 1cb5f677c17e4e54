package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The committed modules of testdata/wat are what their sources build to.
// CI has only Go; where wabt's wat2wasm is installed, this checks them.
func TestWatModulesReproducible(t *testing.T) {
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Skip("wat2wasm (wabt) is not installed")
	}
	srcs, err := filepath.Glob("testdata/wat/*.wat")
	must(t, err)
	for _, src := range srcs {
		name := strings.TrimSuffix(filepath.Base(src), ".wat")
		out := filepath.Join(t.TempDir(), name+".wasm")
		if b, err := exec.Command(wat2wasm, src, "-o", out).CombinedOutput(); err != nil {
			t.Fatalf("wat2wasm %s: %v\n%s", src, err, b)
		}
		built, err := os.ReadFile(out)
		must(t, err)
		if !bytes.Equal(built, watBytes[name]) {
			t.Errorf("testdata/wat/%s.wasm is not what %s builds to; rebuild it: wat2wasm %s.wat -o %s.wasm", name, src, name, name)
		}
	}
}
