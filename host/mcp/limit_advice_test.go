package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// Regression: a call of a module stopped at its time limit, or whose
// answer passed the output cap, told the client only that (`tool spin
// failed: it ran past its time limit and was stopped (deadline exceeded:
// stopped after 1s)`), where a call of an MCP server's tool says which
// setting sets the limit. Each names the setting too.
func TestModuleLimitsNameTheirSetting(t *testing.T) {
	testModules(t)
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	af, err := host.ParseAgentFile([]byte(`name: limits
model: {provider: script}
workspace: ws
tools: [{module: `+hostileWasm+`, only: [spin, echo]}]
sandbox: {timeout: 1s, output: 1KiB}
`), dir)
	must(t, err)
	store, err := host.OpenStore(filepath.Join(dir, "store"))
	must(t, err)
	ctx := context.Background()
	eng, err := host.NewEngine(ctx, host.Config{CacheDir: testCache, Store: store})
	must(t, err)
	defer eng.Close(ctx)
	sess, err := eng.OpenSession(ctx, host.SessionOptions{Agent: af, ID: "l"})
	must(t, err)
	defer sess.Close()
	long, err := json.Marshal(map[string]any{"text": strings.Repeat("a", 4096), "n": 1})
	must(t, err)
	for _, tt := range []struct {
		tool, input, want string
	}{
		{"spin", `{}`, "sandbox: {timeout}"},
		{"echo", string(long), "sandbox: {output}"},
	} {
		out, err := sess.Call(ctx, tt.tool, json.RawMessage(tt.input), nil)
		must(t, err)
		if !out.IsError || !strings.Contains(out.Output, tt.want) {
			t.Errorf("%s: %q, want it to name %s", tt.tool, out.Output, tt.want)
		}
	}
}
