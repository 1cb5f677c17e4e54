package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

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
// dir. No message of a command server of more than eight times
// limits.Output is kept: a call's answer that large is dropped while it
// is read, and the call fails with host.ErrOutputLimit (a url server's
// answers are checked by the caller once read). A connection that ends
// is made again for the next call; a call that finds it ended and cannot
// make it again, or cannot reach a url server, fails with
// host.ErrNotSent.
//
// # Errors
//
// The server does not start, does not speak MCP, or fails to list its
// tools before ctx ends.
func Connect(ctx context.Context, s host.MCPServer, dir string, limits host.Limits) (host.ExternalTools, error) {
	c := &conn{dial: dialer(s, dir, frameLimit(limits.Output))}
	cs, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	c.cs, c.ended = cs, ended(cs)
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("list tools: %w", err)
		}
		schema, err := json.Marshal(tool.InputSchema)
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("tool %s: input schema: %w", tool.Name, err)
		}
		c.tools = append(c.tools, host.ExternalTool{Name: tool.Name, Description: tool.Description, InputSchema: schema})
	}
	return c, nil
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
func dialer(s host.MCPServer, dir string, limit int) func(context.Context) (*sdk.ClientSession, error) {
	return func(ctx context.Context) (*sdk.ClientSession, error) {
		client := sdk.NewClient(&sdk.Implementation{Name: "cairn", Version: "dev"}, nil)
		cs, err := client.Connect(ctx, transport(s, dir, limit), nil)
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		return cs, nil
	}
}

// transport reaches s: over Streamable HTTP (whose answers are checked
// once read, by the caller), or as a command (see command).
func transport(s host.MCPServer, dir string, limit int) sdk.Transport {
	if s.URL != "" {
		hc := &http.Client{Transport: headers{s.Headers}}
		return &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc}
	}
	prog := s.Command[0]
	if strings.ContainsRune(prog, filepath.Separator) && !filepath.IsAbs(prog) {
		prog = filepath.Join(dir, prog)
	}
	cmd := exec.Command(prog, s.Command[1:]...)
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	cmd.Env = environ(s.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return command{cmd: cmd, limit: limit}
}

// command is a server started as a command and spoken to over its stdin
// and stdout, as the SDK's CommandTransport does, but in a process group
// of its own and with what it writes read through frames.
type command struct {
	cmd   *exec.Cmd
	limit int
}

func (t command) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	r := &frames{br: bufio.NewReaderSize(stdout, 64<<10), limit: t.limit}
	// The SDK's own bound on a message only backs up frames': past it,
	// it ends the connection.
	conn := &sdk.IOTransport{Reader: serverStdout{r}, Writer: &process{cmd: t.cmd, stdin: stdin}, MaxLineLength: 2 * t.limit}
	return conn.Connect(ctx)
}

// serverStdout is a server's stdout, which is not closed here: the
// server is ended through its stdin (see process), and its stdout closed
// once it has exited.
type serverStdout struct{ *frames }

func (serverStdout) Close() error { return nil }

// terminateWait is how long process.Close waits for the server to exit
// before each signal, as the SDK's CommandTransport does.
const terminateWait = 5 * time.Second

// process is a server's stdin. Closing it ends the server as the MCP
// specification says: stdin closed, then, if it has not exited within
// terminateWait, SIGTERM to its process group, and then SIGKILL.
type process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

func (p *process) Close() error {
	p.stdin.Close()
	exited := make(chan struct{})
	go func() {
		p.cmd.Wait()
		close(exited)
	}()
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			syscall.Kill(-p.cmd.Process.Pid, sig)
		}
		select {
		case <-exited:
			return nil
		case <-time.After(terminateWait):
		}
	}
	return fmt.Errorf("MCP server %s (pid %d) did not exit after SIGKILL", p.cmd.Path, p.cmd.Process.Pid)
}

// environ is the command's environment: PATH, HOME and what env lists.
func environ(env []string) []string {
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, e := range env {
		if strings.Contains(e, "=") {
			out = append(out, e)
		} else if v, ok := os.LookupEnv(e); ok {
			out = append(out, e+"="+v)
		}
	}
	return out
}

type headers struct{ h map[string]string }

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// conn is a connection to one MCP server, made again by dial when it
// has ended (the server exited, or broke the protocol).
type conn struct {
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
	case errors.As(err, &wire) && wire.Code == dropCode:
		return "", false, fmt.Errorf("%w: %s", host.ErrOutputLimit, wire.Message)
	case err != nil:
		return "", false, err
	}
	var b strings.Builder
	for _, content := range res.Content {
		if t, ok := content.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		} else if raw, err := json.Marshal(content); err == nil {
			b.Write(raw)
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		b.Write(raw)
	}
	return b.String(), res.IsError, nil
}

// send calls a tool on the session, made again if it has ended. A call
// the session refused, since it was ending, is sent again once it has.
func (c *conn) send(ctx context.Context, name string, input json.RawMessage) (*sdk.CallToolResult, error) {
	for again := false; ; again = true {
		cs, ended, err := c.session(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", host.ErrNotSent, err)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: input})
		if !errors.Is(err, sdk.ErrConnectionClosed) || again {
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

// dropCode is the code of the error response that frames puts in the
// place of an answer too large to read: one of JSON-RPC's codes for an
// implementation's own errors.
const dropCode = -32090

// frames passes on a server's stdout a line at a time (a stdio server
// writes one JSON-RPC message a line), each held until it is whole, up
// to limit bytes. A longer line is read to its end without being kept: a
// response is replaced by an error response (dropCode) to its request
// that says how large it was; anything else (a request or notification
// of the server's) is dropped.
type frames struct {
	br      *bufio.Reader
	limit   int
	pending []byte // the rest of the line being read out
	err     error  // what ended the input, once pending is read out
}

func (f *frames) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.pending, f.err = f.line()
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// line reads the next line, whole, or what replaces one over limit.
func (f *frames) line() ([]byte, error) {
	var line []byte
	for {
		chunk, err := f.br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > f.limit {
			return f.drop(line, err)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// drop reads the rest of a line that began with head, past limit,
// finding whether it is a response and to which request, and returns
// the error response that replaces it, or nothing.
func (f *frames) drop(head []byte, err error) ([]byte, error) {
	var id idScanner
	var m methodScanner
	id.feed(head)
	m.feed(head)
	size := len(head)
	for errors.Is(err, bufio.ErrBufferFull) {
		var chunk []byte
		chunk, err = f.br.ReadSlice('\n')
		id.feed(chunk)
		m.feed(chunk)
		size += len(chunk)
	}
	if !id.found || !json.Valid(id.id) || string(id.id) == "null" || m.found {
		return nil, err
	}
	msg := fmt.Sprintf("its answer of %d bytes passed the %d bytes cairn reads of one", size, f.limit)
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id.id),
		"error": map[string]any{"code": dropCode, "message": msg}})
	return append(answer, '\n'), err
}

// methodScanner finds, in JSON read a piece at a time, whether the
// top-level object has a "method" member: a request or notification, not
// a response.
type methodScanner struct {
	depth                    int
	inStr, esc               bool
	expectKey, keyStr, found bool
	key                      []byte
}

func (s *methodScanner) feed(b []byte) {
	for _, c := range b {
		if s.found {
			return
		}
		s.step(c)
	}
}

func (s *methodScanner) step(c byte) {
	if s.inStr {
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
		case c == '"':
			s.inStr = false
			s.found = s.keyStr && string(s.key) == "method"
			s.keyStr = false
			return
		}
		if s.keyStr && len(s.key) <= len("method") {
			s.key = append(s.key, c)
		}
		return
	}
	switch c {
	case '{', '[':
		s.depth++
		s.expectKey = c == '{' && s.depth == 1
	case '}', ']':
		s.depth--
	case ',':
		s.expectKey = s.depth == 1
	case '"':
		s.inStr = true
		s.keyStr, s.expectKey = s.depth == 1 && s.expectKey, false
		s.key = s.key[:0]
	}
}
