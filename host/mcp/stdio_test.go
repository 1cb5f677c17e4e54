package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

func TestIDScanner(t *testing.T) {
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"id":9}}`:          `2`,
		`{"method":"x","params":{"a":"id","id":5,"b":["id",{"id":1}]},"id":"a\"b"}`: `"a\"b"`,
		`{ "id" : 7 }`: `7`,
		`{"params":{"text":"\"id\":3"},"id":null}`: `null`,
		`{"method":"notifications/x"}`:             ``,
		`{"idx":1,"xid":2}`:                        ``,
	} {
		var s idScanner
		for i := range len(in) { // a byte at a time, as pieces arrive
			s.feed([]byte{in[i]})
		}
		if got := string(s.id); (s.found && got != want) || (!s.found && want != "") {
			t.Errorf("%s: id %q (found %v), want %q", in, got, s.found, want)
		}
	}
}

// A line over the bound is answered with an error naming its id, and the
// lines around it pass through whole.
func TestLineLimiter(t *testing.T) {
	big := `{"method":"tools/call","params":{"arguments":{"content":"` + strings.Repeat("x", 500) + `"}},"jsonrpc":"2.0","id":41}`
	in := "{\"id\":1}\n" + big + "\n{\"id\":2}\n"
	var answers bytes.Buffer
	out, err := io.ReadAll(newLineLimiter(strings.NewReader(in), &answers, 100))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "{\"id\":1}\n{\"id\":2}\n" {
		t.Errorf("passed on %q", out)
	}
	var a struct {
		ID    json.RawMessage
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(answers.Bytes(), &a); err != nil || string(a.ID) != "41" || a.Error.Code != tooLargeCode ||
		!strings.Contains(a.Error.Message, "more than 100 bytes") {
		t.Errorf("answer %s (%v)", answers.Bytes(), err)
	}
}

// Regression: one stdio message over the SDK's bound ended the session,
// unanswered. It is answered with an error and the session goes on.
func TestStdioMessageTooLargeIsAnswered(t *testing.T) {
	f := serve(t, "", nil)
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.ServeIO(ctx, cr, sw) }()
	defer func() { cw.Close(); cancel(); <-done }()
	replies := bufio.NewReader(sr)
	send := func(s string) {
		if _, err := io.WriteString(cw, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	reply := func() map[string]json.RawMessage {
		got := make(chan []byte, 1)
		go func() { line, _ := replies.ReadBytes('\n'); got <- line }()
		select {
		case line := <-got:
			var m map[string]json.RawMessage
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("reply %q: %v", line, err)
			}
			return m
		case <-time.After(time.Minute):
			t.Fatal("no reply within a minute")
			return nil
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := reply(); string(r["id"]) != "1" || r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	go io.WriteString(cw, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write_file","arguments":{"path":"big.txt","content":"`+
		strings.Repeat("x", maxStdioMessage)+`"}},"id":2}`+"\n") // from a goroutine: the pipe buffers nothing
	if r := reply(); string(r["id"]) != "2" || !strings.Contains(string(r["error"]), "more than") {
		t.Fatalf("the message too large: %v", r)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if r := reply(); string(r["id"]) != "3" || r["result"] == nil {
		t.Fatalf("a request after it: %v", r)
	}
}
