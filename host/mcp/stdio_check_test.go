package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMessageCheck(t *testing.T) {
	for _, tt := range []struct {
		line    string
		batches bool
		pass    string // what passes on; empty: refused
		code    int64
		id      string
	}{
		{line: " {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n", pass: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{line: `{"jsonrpc":"2.0","id":1,"result":{}}`, pass: `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, pass: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{line: `{"jsonrpc":"2.0","id":1,"method":"ping"`, code: -32700, id: `1`},
		{line: `{"jsonrpc":"2.0","method":"ping","id":1`, code: -32700, id: `null`}, // nothing ends the number
		{line: `{"jsonrpc":"2.0","id":"a","method":`, code: -32700, id: `"a"`},
		{line: `{"jsonrpc":"2.0","id":2,"method":"ping"}}`, code: -32700, id: `2`},
		{line: `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, code: -32600, id: `null`},
		{line: `{"jsonrpc":"2.0","id":1}`, pass: `{"jsonrpc":"2.0","id":1}`}, // a response to no request: the SDK ignores it
		{line: `{"id":1,"method":"ping"}`, code: -32600, id: `1`},
		{line: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, code: -32600, id: `null`},
		{line: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, batches: true, pass: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`},
		{line: `[]`, batches: true, code: -32600, id: `null`},
		{line: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`, batches: true, code: -32600, id: `null`},
		{line: `[` + strings.Repeat(`{"a":[`, 500) + strings.Repeat(`]}`, 500) + `]`, batches: true, code: -32600, id: `null`},
	} {
		c := messageCheck{batches: func() bool { return tt.batches }}
		msg, r := c.check([]byte(tt.line))
		switch {
		case tt.pass != "" && (r != nil || string(msg) != tt.pass+"\n"):
			t.Errorf("%s: passed %q, refused %+v; want %s passed", tt.line, msg, r, tt.pass)
		case tt.pass == "" && (r == nil || msg != nil || r.code != tt.code || string(r.id) != tt.id):
			t.Errorf("%s: passed %q, refused %+v; want code %d, id %s", tt.line, msg, r, tt.code, tt.id)
		}
	}
	var c messageCheck
	if msg, r := c.check([]byte(" \t\r\n")); msg != nil || r != nil {
		t.Errorf("a blank line: passed %q, refused %+v", msg, r)
	}
}

// FuzzStdioLines: whatever a client sends on stdio, the SDK's stdio
// transport reads through the line check to the end of the input without
// an error (which would end the session), and every line refused is
// answered with a JSON-RPC error response.
func FuzzStdioLines(f *testing.F) {
	for _, seed := range []string{
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"foo\":1}\n[]\n42\n",
		"{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"ping\"}\n{\"a\":1} {\"b\":2}\n",
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n",
		"[{\"jsonrpc\":\"2.0\",\"method\":\"x\"},{\"jsonrpc\":\"2.0\",\"method\":\"y\"}]\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
		"\xef\xbb\xbf{}\n  \n\r\n{\"jsonrpc\":\"2.0\",\"id\":\"\\\"\",\"method\":\"x\"}\n",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, batches bool) {
		var answers bytes.Buffer
		lines := newLineLimiter(bytes.NewReader(in), &answers, 1<<12)
		lines.check = (&messageCheck{batches: func() bool { return batches }}).check
		conn, err := (&sdk.IOTransport{Reader: io.NopCloser(lines), Writer: nopCloser{io.Discard}}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for {
			if _, err := conn.Read(context.Background()); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("the SDK ends the session: %v", err)
			}
		}
		sc := bufio.NewScanner(&answers)
		for sc.Scan() {
			var a errorResponse
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil || a.Version != "2.0" || a.Error.Code == 0 || !json.Valid(a.ID) {
				t.Fatalf("answer %s (%v)", sc.Bytes(), err)
			}
		}
	})
}
