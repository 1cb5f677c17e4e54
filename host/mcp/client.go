package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// Connect starts or reaches an agent file's MCP server and lists its
// tools; it is the host.Connector of cairn's engine. A command is started
// in a process group of its own (a signal to cairn's group is cairn's to
// act on: it stops its calls, then the server) with only the environment
// its entry lists (and PATH and HOME), its stderr passed to cairn's; a
// relative program path is resolved against the agent file's directory
// dir. No message of more than eight times limits.Output is kept, a
// command's line or a url server's event or JSON body: a call's answer
// that large is dropped while it is read, the call fails with
// host.ErrOutputLimit, and the connection goes on. A connection that ends
// is made again for the next call; a call that finds it ended and cannot
// make it again, or cannot reach a url server, fails with
// host.ErrNotSent.
//
// # Errors
//
// The server does not start, does not speak MCP, or fails to list its
// tools before ctx ends.
func Connect(ctx context.Context, s host.MCPServer, dir string, limits host.Limits) (host.ExternalTools, error) {
	refusals := &refusals{why: map[string]string{}}
	c := &conn{name: s.Name, dial: dialer(s, dir, frameLimit(limits.Output), refusals)}
	cs, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	c.cs, c.ended = cs, ended(cs)
	if c.tools, err = listTools(ctx, cs, refusals); err != nil {
		cs.Close()
		return nil, err
	}
	return c, nil
}

// maxToolPages and maxTools bound what cairn reads of a server's
// tools/list: a server whose list goes on past them (a cursor that never
// ends) is refused, not read until the time limit of its start.
const (
	maxToolPages = 100
	maxTools     = 10000
)

// listTools reads a server's tools/list, page by page. A tool without an
// input schema has none here (the host takes it as an object). A tool the
// SDK's client leaves out of a page (an x-mcp-header of its input schema
// it refuses) is listed with Refused saying why, from refusals, so that
// it is not missing without a word.
//
// # Errors
//
// The server fails a page, gives a cursor it gave before, or lists more
// than maxToolPages pages or maxTools tools.
func listTools(ctx context.Context, cs *sdk.ClientSession, refusals *refusals) ([]host.ExternalTool, error) {
	var tools []host.ExternalTool
	seen := map[string]bool{"": true}
	params := &sdk.ListToolsParams{}
	for page := 1; ; page++ {
		listed := &listedTools{}
		res, err := cs.ListTools(context.WithValue(ctx, listedKey{}, listed), params)
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		for _, tool := range withRefused(listed.tools, res.Tools) {
			var schema json.RawMessage
			if tool.InputSchema != nil {
				if schema, err = json.Marshal(tool.InputSchema); err != nil {
					return nil, fmt.Errorf("tool %s: input schema: %w", tool.Name, err)
				}
			}
			et := host.ExternalTool{Name: tool.Name, Description: tool.Description, InputSchema: schema}
			if !slices.Contains(res.Tools, tool) {
				et.Refused = refusals.of(tool.Name)
			}
			tools = append(tools, et)
		}
		next := res.NextCursor
		switch {
		case next == "":
			return tools, nil
		case seen[next]:
			return nil, fmt.Errorf("list tools: the server's tools/list kept paginating: page %d gave the cursor %q, which an earlier page gave, so the list never ends (a fault of the server's pagination: check the server)",
				page, cut(next, 80))
		case page >= maxToolPages || len(tools) >= maxTools:
			return nil, fmt.Errorf("list tools: the server's tools/list kept paginating: %d pages (%d tools) and still a next cursor; cairn reads at most %d pages or %d tools of a server (check the server's pagination)",
				page, len(tools), maxToolPages, maxTools)
		}
		seen[next] = true
		params = &sdk.ListToolsParams{Cursor: next}
	}
}

// cut shortens s to n bytes for a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// frameLimit is the most cairn reads of one answer of a server whose
// calls' output is capped at output bytes: room for JSON's escapes and
// for a result's structured copy of its text. Zero: the SDK's bound.
func frameLimit(output host.Size) int {
	if output <= 0 {
		return sdk.DefaultMaxLineLength
	}
	return int(8*output + 64<<10)
}

// dialer connects to s, starting it anew each time if it is a command.
func dialer(s host.MCPServer, dir string, limit int, refusals *refusals) func(context.Context) (*sdk.ClientSession, error) {
	return func(ctx context.Context) (*sdk.ClientSession, error) {
		client := sdk.NewClient(&sdk.Implementation{Name: "cairn", Version: "dev"}, &sdk.ClientOptions{Logger: slog.New(refusals)})
		client.AddSendingMiddleware(keepListed)
		t := transport(s, dir, limit)
		cs, err := client.Connect(ctx, t, nil)
		if err != nil {
			return nil, startError(ctx, s, t, err)
		}
		return cs, nil
	}
}

// startError is the error of a connection to s, over t, that failed with
// err before the server answered initialize: what became of the server,
// and what to check. A start that ran out of time (ctx) is the caller's
// to tell.
func startError(ctx context.Context, s host.MCPServer, t sdk.Transport, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if s.URL != "" {
		return fmt.Errorf("connect: %w; check that the server is running and answers MCP over Streamable HTTP at %s (with the headers: it needs, if any)", err, s.URL)
	}
	line := "`" + strings.Join(s.Command, " ") + "`"
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("connect: %w: the program %q of %s is not on PATH (%s); give its absolute path in the agent file's mcp: command (a path with a slash is taken from the agent file's directory), or install it on PATH",
			err, s.Command[0], line, os.Getenv("PATH"))
	}
	what := "ended the connection"
	if c, ok := t.(command); ok {
		switch {
		case c.cmd.Process == nil:
			return fmt.Errorf("connect: %w: MCP server %s could not be started; check that its program exists and may be run (a path with a slash is taken from the agent file's directory, %s)",
				err, line, c.cmd.Dir)
		case c.cmd.ProcessState != nil:
			what = "ended (" + c.cmd.ProcessState.String() + ")"
		}
	}
	return fmt.Errorf("connect: MCP server %s %s before it answered initialize: %w; check that it starts an MCP server that speaks on its stdin and stdout "+
		"and writes nothing there that is not a JSON-RPC message (its logs go to its stderr, which is cairn's)", line, what, err)
}

// conn is a connection to one MCP server, made again by dial when it
// has ended (the server exited, or broke the protocol).
type conn struct {
	name  string // the server's, in the agent file
	dial  func(context.Context) (*sdk.ClientSession, error)
	tools []host.ExternalTool

	mu     sync.Mutex
	cs     *sdk.ClientSession
	ended  chan struct{} // closed when cs has ended
	closed bool
}

// ended is closed when cs ends.
func ended(cs *sdk.ClientSession) chan struct{} {
	done := make(chan struct{})
	go func() {
		cs.Wait()
		close(done)
	}()
	return done
}

func (c *conn) Tools() []host.ExternalTool { return c.tools }

// session is the connection's session, made again if it has ended, and
// what is closed when it ends.
func (c *conn) session(ctx context.Context) (*sdk.ClientSession, chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, errors.New("the connection is closed")
	}
	select {
	case <-c.ended:
	default:
		return c.cs, c.ended, nil
	}
	c.cs.Close()
	cs, err := c.dial(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("the connection had ended, and connecting again failed: %w", err)
	}
	c.cs, c.ended = cs, ended(cs)
	return cs, c.ended, nil
}

func (c *conn) Call(ctx context.Context, name string, input json.RawMessage) (string, bool, error) {
	res, err := c.send(ctx, name, input)
	var wire *jsonrpc.Error
	var netErr *net.OpError
	switch {
	case errors.Is(err, host.ErrNotSent):
		return "", false, err
	case errors.Is(err, sdk.ErrConnectionClosed): // refused before it was written
		return "", false, fmt.Errorf("%w: %w", host.ErrNotSent, err)
	case errors.As(err, &netErr) && netErr.Op == "dial": // a url server not reached
		return "", false, fmt.Errorf("%w: %w", host.ErrNotSent, err)
	case errors.Is(err, sdk.ErrSessionMissing): // refused again, in a new session
		return "", false, fmt.Errorf("%w: the server refused the call for its session, a new one too (HTTP 404): %w", host.ErrNotSent, err)
	case errors.As(err, &wire) && wire.Code == dropCode:
		return "", false, fmt.Errorf("%w: %s", host.ErrOutputLimit, wire.Message)
	case errors.As(err, &wire) && wire.Code == cutCode:
		return "", false, errors.New(wire.Message)
	case errors.As(err, &wire) && !localCodes[wire.Code]:
		// The server answered, with an error instead of a result: an
		// error result, not a failure of the server.
		return fmt.Sprintf("MCP server %s answered the call with an error (JSON-RPC code %d): %s; the answer does not say whether the call changed anything before it failed",
			c.name, wire.Code, wire.Message), true, nil
	case err != nil:
		return "", false, err
	}
	var b strings.Builder
	for i, content := range res.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(contentText(content))
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		b.Write(raw)
	}
	return b.String(), res.IsError, nil
}

// localCodes are the codes of the errors the SDK's client makes itself
// for a call no answer came to (its connection closing, a message its
// transport refused), which are not the server's answer.
var localCodes = map[int64]bool{-32003: true, -32004: true, -32005: true}

// contentText is how one content of a tool's result reads to the model,
// which cairn gives text: text as it is, a text resource as its URI and
// text; an image, audio or binary resource as a line that names it, its
// type and size (its bytes, as base64, would fill the model's context
// with what it cannot read as text); anything else as its JSON.
func contentText(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return omitted("an image", c.MIMEType, len(c.Data))
	case *sdk.AudioContent:
		return omitted("audio", c.MIMEType, len(c.Data))
	case *sdk.EmbeddedResource:
		if r := c.Resource; r != nil && r.Blob != nil {
			return omitted("resource "+r.URI, r.MIMEType, len(r.Blob))
		} else if r != nil {
			return "[resource " + r.URI + "]\n" + r.Text
		}
	}
	raw, _ := json.Marshal(c)
	return string(raw)
}

// omitted is the line that stands for content the model is not given.
func omitted(what, mimeType string, size int) string {
	return fmt.Sprintf("[%s (%s, %d bytes) the tool answered; cairn gives a tool's text to the model, not this]", what, cmp.Or(mimeType, "no type"), size)
}

// send calls a tool on the session, made again if it has ended. A call
// the session refused, since it was ending, is sent again once it has;
// so is a call a url server refused since it no longer has the session
// (404: it restarted, or let the session expire), which MCP asks a client
// to answer with a new session: the call did not run.
func (c *conn) send(ctx context.Context, name string, input json.RawMessage) (*sdk.CallToolResult, error) {
	for again := false; ; again = true {
		cs, ended, err := c.session(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", host.ErrNotSent, err)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: input})
		if again || !errors.Is(err, sdk.ErrConnectionClosed) && !errors.Is(err, sdk.ErrSessionMissing) {
			return res, err
		}
		select {
		case <-ended:
		case <-ctx.Done():
			return nil, err
		}
	}
}

func (c *conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.cs.Close()
}
