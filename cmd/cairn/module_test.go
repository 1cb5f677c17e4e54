package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/internal/gocmd"
)

const modulePath = "github.com/cairnrun/cairn"

// repoRoot is the checkout this test runs in.
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs("../..")
	must(t, err)
	return root
}

// A tool author's module outside this repository imports the guest SDK by
// its public path (a replace points it at this checkout), builds the
// guest package's own doc example, packs it with `cairn tools pack` and an
// agent calls it.
func TestToolInSeparateModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a tool module")
	}
	root, dir := repoRoot(t), t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/shout\n\ngo 1.25.0\n\nrequire "+modulePath+
		" v0.0.0\n\nreplace "+modulePath+" => "+root+"\n"), 0o644))
	copyFile(t, filepath.Join(root, "go.sum"), filepath.Join(dir, "go.sum"))
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(guestDocExample(t, filepath.Join(root, "guest", "guest.go"))), 0o644))
	env := []string{"GOOS=wasip1", "GOARCH=wasm", "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod"}
	// -trimpath: the module's bytes do not name the temporary directory, so
	// the compile cache knows them from the run before.
	gocmd.Run(t, dir, env, "build", "-trimpath", "-o", "shout.wasm", ".")

	cache := cacheForTests(t)
	if code, out, errOut := cairn(t, "tools", "pack", filepath.Join(dir, "shout.wasm"), "--cache", cache); code != exitDone {
		t.Fatalf("pack: exit %d\n%s%s", code, out, errOut)
	}
	ws := filepath.Join(dir, "workspace")
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "note.txt"), []byte("quiet words"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(
		"turns:\n  - tool_calls: [{name: shout, input: {path: note.txt}}]\n  - text: done\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte("name: shout\nmodel: {provider: script, script: script.yaml}\n"+
		"workspace: workspace\ntools: [{module: shout.wasm, grant: {workspace: ro}}]\n"), 0o644))
	code, out, errOut := cairn(t, "run", "-f", filepath.Join(dir, "agent.yaml"), "--store", t.TempDir(), "--cache", cache)
	if code != exitDone || !strings.Contains(out, "✓ shout") || !strings.Contains(out, "QUIET WORDS") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
}

// guestDocExample is the program the guest package's doc shows first.
func guestDocExample(t *testing.T, path string) string {
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	var src strings.Builder
	in := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		code, isCode := strings.CutPrefix(line, "//\t")
		switch {
		case code == "package main":
			in = true
		case in && !isCode && line != "//":
			return src.String()
		}
		if in && isCode {
			src.WriteString(code)
		}
		if in {
			src.WriteString("\n")
		}
	}
	t.Fatalf("%s shows no program", path)
	return ""
}
