package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"
)

// rawClient is a client that writes JSON-RPC lines itself to a server's
// ServeIO, as a buggy or hostile client would.
type rawClient struct {
	t       *testing.T
	lines   chan string // to send, in order
	replies chan []byte
	done    chan struct{} // closed when ServeIO returns
	err     error         // what it returned
}

// rawMessage is any JSON-RPC message, as read back.
type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// newRawClient serves srv on pipes until the test ends (or ctx does) and
// initializes the session with the given protocol version and client
// capabilities.
func newRawClient(t *testing.T, ctx context.Context, srv *Server, version, caps string) *rawClient {
	t.Helper()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	c := &rawClient{t: t, lines: make(chan string, 100), replies: make(chan []byte, 100), done: make(chan struct{})}
	go func() {
		c.err = srv.ServeIO(ctx, cr, sw)
		close(c.done)
		sw.Close()
		cr.Close()
	}()
	go func() { // the pipe buffers nothing: lines are written while replies are read
		for line := range c.lines {
			io.WriteString(cw, line+"\n")
		}
		cw.Close()
	}()
	go func() {
		br := bufio.NewReader(sr)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				close(c.replies)
				return
			}
			c.replies <- line
		}
	}()
	t.Cleanup(func() {
		close(c.lines)
		cancel()
		select {
		case <-c.done:
		case <-time.After(time.Minute):
			t.Error("ServeIO did not return within a minute of its input's end")
		}
	})
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"raw","version":"1"}}}`,
		version, caps))
	if m := c.reply(); string(m.ID) != `"init"` || m.Result == nil {
		t.Fatalf("initialize: %+v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *rawClient) send(line string) {
	c.lines <- line
}

// reply is the next message the server writes, within a minute.
func (c *rawClient) reply() rawMessage {
	c.t.Helper()
	select {
	case line, ok := <-c.replies:
		if !ok {
			<-c.done
			c.t.Fatalf("the server ended the session: %v", c.err)
		}
		var m rawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			c.t.Fatalf("reply %q: %v", line, err)
		}
		return m
	case <-time.After(time.Minute):
		c.t.Fatal("no reply within a minute")
	}
	return rawMessage{}
}

// replyTo is the next message that is not a notification.
func (c *rawClient) replyTo() rawMessage {
	c.t.Helper()
	for {
		if m := c.reply(); m.ID != nil {
			return m
		}
	}
}

func (m rawMessage) String() string {
	b, _ := json.Marshal(m)
	return string(b)
}
