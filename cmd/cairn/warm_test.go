package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tools warm compiles the built-in tools into the compile cache it is
// given; on the interpreter, which keeps nothing there, it refuses, as it
// does a module it cannot read.
func TestToolsWarm(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	code, out, errOut := cairn(t, "tools", "warm", "--cache", cache, "--engine", "compiler")
	if code != 0 || !strings.Contains(out, "compiled the built-in tools into "+cache) {
		t.Fatalf("tools warm: exit %d, %q, %q", code, out, errOut)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "wazero-*", "*")); len(files) == 0 {
		t.Error("the compile cache holds no compiled module after tools warm")
	}
	if marks, _ := os.ReadDir(filepath.Join(cache, "cairn-compiled")); len(marks) == 0 {
		t.Error("no module is marked as compiled after tools warm")
	}
	if code, _, errOut := cairn(t, "tools", "warm", "--cache", cache, "--engine", "interpreter"); code != exitUsage || !strings.Contains(errOut, "interpreter") {
		t.Errorf("tools warm on the interpreter: exit %d, %q", code, errOut)
	}
	if code, _, errOut := cairn(t, "tools", "warm", "--cache", cache, filepath.Join(t.TempDir(), "missing.wasm")); code != exitUsage {
		t.Errorf("tools warm of a missing module: exit %d, %q", code, errOut)
	}
}
