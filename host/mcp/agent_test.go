package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/host"
)

// --tools DIR serves the built-in tools and each packed module of DIR,
// granted what its manifest asks for.
func TestToolsAgent(t *testing.T) {
	testModules(t)
	dir := t.TempDir()
	b, err := os.ReadFile(toolsWasm)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "mcptools.wasm"), b, 0o644))
	af, err := ToolsAgent([]string{dir})
	must(t, err)
	if len(af.Tools) != 2 || af.Tools[0].Module != host.BuiltinModule || af.Tools[1].Grant == nil ||
		af.Tools[1].Grant.Workspace != abi.AccessReadWrite || af.Tools[1].Grant.Clock || len(af.Tools[1].Grant.Env) > 0 {
		t.Errorf("tools %+v, want builtin and mcptools granted the workspace read-write only", af.Tools)
	}
	infos, err := host.ListTools(af)
	must(t, err)
	if len(infos) != 8 {
		t.Errorf("%d tools, want 8", len(infos))
	}
	must(t, os.WriteFile(filepath.Join(dir, "junk.wasm"), []byte("not wasm"), 0o644))
	if _, err := ToolsAgent([]string{dir}); err == nil || !strings.Contains(err.Error(), "junk.wasm") {
		t.Errorf("a module without a manifest: %v", err)
	}
	if _, err := ToolsAgent([]string{filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing directory was accepted")
	}
}

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"[::1]:8080", "", true},
		{"localhost:0", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"example.com:80", "", false},
		{"0.0.0.0:8080", "t", true},
		{"8080", "", false},
	}
	for _, tt := range tests {
		err := CheckAddr(tt.addr, tt.token)
		if (err == nil) != tt.ok {
			t.Errorf("CheckAddr(%q, %q) = %v", tt.addr, tt.token, err)
		}
		if err != nil && tt.addr != "8080" && !errors.Is(err, ErrTokenRequired) {
			t.Errorf("CheckAddr(%q): %v, want ErrTokenRequired", tt.addr, err)
		}
	}
}
