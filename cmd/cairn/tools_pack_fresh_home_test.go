package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// freshHome is the environment of a machine cairn has never run on: HOME
// an empty directory, no CAIRN_ or XDG_ variable set.
func freshHome(t *testing.T) (env []string, home string) {
	home = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home), home
}

// Regression: `cairn tools pack` on a fresh machine exited 2, "no store at
// ~/.local/share/cairn", since it opened the store it never uses (and
// so did every test that packs a tool, under a fresh HOME). No tools
// command needs a store: each works without one and makes none.
func TestToolsPackOnAFreshMachine(t *testing.T) {
	t.Parallel()
	bin, dir := cairnBinary(t), t.TempDir()
	raw := filepath.Join(dir, "hostile.raw.wasm")
	buildWasi(t, "github.com/cairnrun/cairn/host/testdata/hostile", raw)
	env, home := freshHome(t)
	packed := filepath.Join(dir, "hostile.wasm")
	for _, args := range [][]string{
		{"tools", "pack", raw, "-o", packed},
		{"tools", "ls", "--tools", dir},
		{"tools", "warm", packed},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cairn %s with HOME=%s and no CAIRN_ variable: %v\n%s", strings.Join(args, " "), home, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "cairn")); err == nil {
		t.Errorf("a tools command made the store %s/.local/share/cairn", home)
	}
	out, err := exec.Command(bin, "tools", "ls", "--tools", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "spin  (") {
		t.Fatalf("the packed module lists no spin tool: %v\n%s", err, out)
	}
}
