package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/host"
)

// Regression: a stdio server that answered a call with a JSON-RPC batch
// past the limit of an answer had the batch dropped with no answer in its
// place, and the call waited for its time limit. The call fails at once,
// saying the server's answer, a batch, passed the limit, as an answer
// past it does; the session goes on, and a batch within the limit
// answers its call.
func TestServerOverStdioAnswersWithABatchPastTheLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tools, err := Connect(ctx, host.MCPServer{Name: "odd", Command: []string{oddServer(t), "batch"}}, t.TempDir(),
		host.Limits{Timeout: host.Duration(10 * time.Second), Output: 64 << 10})
	must(t, err)
	defer tools.Close()
	for i, c := range []struct {
		tool, out string
		err       bool
	}{
		{"batched", "called batched with {}", false},
		{"hugebatch", "its answer, a JSON-RPC batch of 1048", true},
		{"batched", "called batched with {}", false},
		{"hugebatch", "passed the 589824 bytes cairn reads of one", true},
		{"ok", `called ok with {"x":"y"}`, false},
	} {
		args := json.RawMessage(`{}`)
		if c.tool == "ok" {
			args = json.RawMessage(`{"x":"y"}`)
		}
		out, isError, err := tools.Call(ctx, c.tool, args)
		switch {
		case c.err && (err == nil || !strings.Contains(err.Error(), c.out) || strings.Contains(err.Error(), "time limit")):
			t.Errorf("call %d (%s): %q, %v, %v, want an error saying %q", i+1, c.tool, out, isError, err, c.out)
		case !c.err && (err != nil || isError || out != c.out):
			t.Errorf("call %d (%s): %q, %v, %v", i+1, c.tool, out, isError, err)
		}
	}
}

// Regression: the error response that takes the place of a stdio
// server's batch past the limit answers the request by its id as the
// request spelled it (7), not as the batch did (7.0), and answers nothing
// the client did not ask.
func TestStdioBatchPastTheLimitIsAnsweredByTheRequestsID(t *testing.T) {
	cmd := exec.Command(oddServer(t), "batch")
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	must(t, cmd.Start())
	p := &process{cmd: cmd, stdin: stdin, asked: &asked{}}
	defer p.Close()
	r := bufio.NewReader(&frames{br: bufio.NewReaderSize(stdout, 64<<10), limit: 64 << 10, asked: p.asked})
	for _, id := range []string{"7", `"seven"`} {
		_, err := p.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"hugebatch","arguments":{}}}` + "\n"))
		must(t, err)
		line, err := r.ReadString('\n')
		must(t, err)
		var m struct {
			ID    json.RawMessage
			Error struct {
				Code    int
				Message string
			}
		}
		if json.Unmarshal([]byte(line), &m) != nil || string(m.ID) != id || m.Error.Code != dropCode {
			t.Errorf("request %s is answered %q", id, line)
		}
	}
}
