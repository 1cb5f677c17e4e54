package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/host"
)

// moduleWithSchema writes into dir the test module with its count tool's
// input schema replaced by schema, packed as a packer of another
// language may pack it (abi.WithManifest, past `cairn tools pack`'s
// checks), and returns the session of an agent of the built-in tools and
// that module, or the error that kept it from opening.
func moduleWithSchema(t *testing.T, schema string) (*host.Session, error) {
	t.Helper()
	testModules(t)
	wasm, err := os.ReadFile(toolsWasm)
	must(t, err)
	m, err := abi.ReadManifest(wasm)
	must(t, err)
	for i := range m.Tools {
		if m.Tools[i].Name == "count" {
			m.Tools[i].InputSchema = schema
		}
	}
	packed, err := abi.WithManifest(wasm, m)
	must(t, err)
	dir := t.TempDir()
	tools, ws := filepath.Join(dir, "tools"), filepath.Join(dir, "ws")
	must(t, os.Mkdir(tools, 0o755))
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(tools, "odd.wasm"), packed, 0o644))
	af, err := ToolsAgent([]string{tools})
	must(t, err)
	store, err := host.OpenStore(filepath.Join(dir, "store"))
	must(t, err)
	ctx := context.Background()
	eng, err := host.NewEngine(ctx, host.Config{CacheDir: testCache, Store: store})
	must(t, err)
	t.Cleanup(func() { eng.Close(ctx) })
	sess, err := eng.OpenSession(ctx, host.SessionOptions{Agent: af, ID: "s", Workspace: ws})
	if err == nil {
		t.Cleanup(func() { sess.Close() })
	}
	return sess, err
}

// Regression: a module whose tool's input schema is not of type object
// (packed by another packer: `cairn tools pack` refuses it) was loaded,
// and `cairn mcp` panicked at it while it listed its tools. It keeps the
// agent from starting, the error naming the tool and why.
func TestModuleSchemaNotAnObjectRefused(t *testing.T) {
	_, err := moduleWithSchema(t, `{"type":"string"}`)
	if err == nil || !strings.Contains(err.Error(), `tool "count": its input schema is of type "string", not "object"`) {
		t.Errorf("a module whose tool takes a string: %v", err)
	}
}

// Regression: a module whose input schema has an x-mcp-header the MCP
// SDK refuses ("bad name", a header on an object) was taken by `cairn
// tools pack`, and `cairn mcp` panicked at it while it listed its tools.
// NewServer refuses it with an error naming the tool and why.
func TestModuleSchemaTheSDKRefusesIsAnError(t *testing.T) {
	sess, err := moduleWithSchema(t, `{"type":"object","properties":{"text":{"type":"string","x-mcp-header":"bad name"}}}`)
	must(t, err)
	_, err = NewServer(sess, Options{})
	if err == nil || !strings.Contains(err.Error(), "tool count") || !strings.Contains(err.Error(), "x-mcp-header") {
		t.Errorf("NewServer: %v, want an error naming count and its x-mcp-header", err)
	}
}
