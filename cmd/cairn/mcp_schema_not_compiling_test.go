package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A tool of an MCP server whose input schema does not compile stopped the
// run with the validator's error alone (input schema: json: cannot
// unmarshal number ...), saying neither which server nor the way out. It
// is refused as a tool model providers would refuse is: naming the server
// and the tool, and leaving it out with only:, or, when it is the
// server's only tool, the server.
func TestMCPToolWhoseSchemaDoesNotCompileSaysToLeaveItOut(t *testing.T) {
	for _, c := range []struct{ tools, want string }{
		{`{"name":"weird","inputSchema":{"type":"object","properties":5}},{"name":"fine","inputSchema":{"type":"object"}}`,
			"leave these tools out with only: [fine]"},
		{`{"name":"weird","inputSchema":{"type":"object","properties":5}}`,
			"remove the server from the agent file's mcp list"},
	} {
		dir := t.TempDir()
		must(t, os.WriteFile(filepath.Join(dir, "server.sh"), []byte(`#!/bin/sh
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"odd","version":"1"}}}\n' "$id";;
  *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[`+c.tools+`]}}\n' "$id";;
  *'"id":'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id";;
  esac
done
`), 0o755))
		must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("turns:\n  - text: finished\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(`name: uses-mcp
model: {provider: script, script: script.yaml}
workspace: ws
tools: [{module: builtin, only: [read_file]}]
sandbox: {timeout: 10s}
mcp: [{name: odd, command: [./server.sh]}]
`), 0o644))
		code, _, errOut := cairn(t, "run", "--store", filepath.Join(dir, "store"), "--cache", cacheForTests(t), "-f", filepath.Join(dir, "agent.yaml"))
		if code == 0 || !strings.Contains(errOut, "mcp server odd") || !strings.Contains(errOut, `tool "weird"`) ||
			!strings.Contains(errOut, "input schema") || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %s", c.tools, code, errOut)
		}
	}
}
