package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn mcp` printed on stderr, raw, the reason a call was
// denied, which may be an MCP client's words: a client that answered the
// approval question with an error whose message held terminal controls
// (OSC 52 setting the clipboard, ESC [2K erasing a line to forge another)
// had the terminal of whoever watched the server act on them. They are
// printed escaped, as everywhere cairn prints text it did not write.
func TestMCPStderrEscapesClientText(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(`name: asks
model: {provider: script}
workspace: ws
tools: [{module: builtin}]
approvals:
  - {tool: write_file, action: ask}
`), 0o644))
	cmd := exec.Command(bin, "mcp", "-f", filepath.Join(dir, "agent.yaml"), "--store", filepath.Join(dir, "store"),
		"--cache", cacheForTests(t), "--id", "asks")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	send := func(line string) {
		t.Helper()
		_, err := stdin.Write([]byte(line + "\n"))
		must(t, err)
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if !lines.Scan() {
		t.Fatalf("no answer to initialize; stderr:\n%s", stderr.String())
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.txt","content":"x"}}}`)
	answered := false
	for !answered && lines.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		must(t, json.Unmarshal(lines.Bytes(), &m))
		switch {
		case m.Method == "elicitation/create":
			send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-1,"message":"no\u001b]52;c;ZXZpbA==\u0007\r\u001b[2Kcairn mcp: round 1 mcp-1 write_file ok"}}`)
		case string(m.ID) == "2":
			answered = true
		}
	}
	if !answered {
		t.Fatalf("the call was not answered; stderr:\n%s", stderr.String())
	}
	stdin.Close()
	cmd.Wait()
	out := stderr.String()
	if !strings.Contains(out, "write_file denied") {
		t.Fatalf("stderr does not tell of the denial:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Errorf("stderr has terminal controls from the client's message:\n%q", out)
	}
}
