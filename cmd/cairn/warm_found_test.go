package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tools warm of a module the compile cache held already told so by
// compiling the module a second time into the temporary files, to learn
// its file's name: with temporary files it could not write it failed,
// saying the cache could not keep a file it held. And once that file's
// time was refreshed (it was last used a minute ago or more) it said the
// module was compiled. It asks the cache which file is the module's.
func TestToolsWarmAgainSaysFoundWithoutCompilingAgain(t *testing.T) {
	const module = "../../sandbox/testdata/wasi-testsuite/tests/assemblyscript/testsuite/wasm32-wasip1/fd_write-to-stdout.wasm"
	cache := filepath.Join(t.TempDir(), "cache")
	code, out, errOut := cairn(t, "tools", "warm", "--cache", cache, "--engine", "compiler", module)
	if code != 0 || !strings.Contains(out, "compiled "+module+" into "+cache) {
		t.Fatalf("tools warm: exit %d, %q, %q", code, out, errOut)
	}
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	code, out, errOut = cairn(t, "tools", "warm", "--cache", cache, "--engine", "compiler", module)
	if code != 0 || !strings.Contains(out, "found "+module+" compiled in "+cache+" already") {
		t.Errorf("tools warm again, without temporary files: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "wazero-*", "*"))
	minutesAgo := time.Now().Add(-5 * time.Minute)
	for _, f := range files {
		if err := os.Chtimes(f, minutesAgo, minutesAgo); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut = cairn(t, "tools", "warm", "--cache", cache, "--engine", "compiler", module)
	if code != 0 || !strings.Contains(out, "found "+module+" compiled in "+cache+" already") {
		t.Errorf("tools warm again, five minutes after: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
