package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/mcp"
	"github.com/cairnrun/cairn/internal/plural"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve an agent's sandboxed tools to MCP clients, on stdio or Streamable HTTP",
		Description: "Every tools/call is a round of an agent in the store (its id is printed on stderr): " +
			"`cairn show`, `log`, `events`, `diff` and `undo` work on it. See docs/mcp.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "the agent file whose tools, grants, limits and approval rules are served"},
			&cli.StringSliceFlag{Name: "tools", Usage: "serve the built-in tools and the packed modules (*.wasm) in `DIR`, each granted what its manifest asks for (repeatable)"},
			&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the directory the tools work in (default: the agent file's workspace)"},
			&cli.StringFlag{Name: "id", Usage: "the session's agent id; an existing agent continues, a call a crash interrupted sealed (default: a new agent, made at the first call)"},
			&cli.StringFlag{Name: "http", Usage: "serve Streamable HTTP on `ADDR` (e.g. 127.0.0.1:8080) instead of stdio"},
			&cli.StringFlag{Name: "token", EnvVars: []string{"CAIRN_MCP_TOKEN"}, Usage: "with --http: the bearer token clients must send; required for an address other than loopback"},
			durationFlag("idle-timeout", mcp.DefaultSessionIdle, "with --http: close a client's session none of whose requests is open for this long (0: never)"),
			newStoreFlag(), newCacheFlag(), newWorkspaceLimitFlag(),
		},
		Action: mcpAction,
	}
}

func mcpAction(c *cli.Context) error {
	af, existing, err := mcpAgent(c)
	if err != nil {
		return err
	}
	addr, token, idle := c.String("http"), c.String("token"), c.Duration("idle-timeout")
	if addr == "" && c.IsSet("idle-timeout") {
		return withCode(exitUsage, errors.New("mcp: --idle-timeout is for sessions over HTTP (--http ADDR): a stdio session ends when its client closes its input"))
	}
	if idle < 0 {
		return withCode(exitUsage, fmt.Errorf("mcp: --idle-timeout %s cannot be negative: give how long a session may go idle before it is closed, 0 for never", idle))
	}
	if idle == 0 {
		idle = -1 // never
	}
	var ln net.Listener
	if addr != "" {
		if err := mcp.CheckAddr(addr, token); err != nil {
			return withCode(exitUsage, err)
		}
		// The address is taken before the session's agent is made: a
		// session that cannot serve leaves no agent behind.
		if ln, err = listen(addr); err != nil {
			return err
		}
		defer ln.Close()
	}
	ctx, stop := interruptible(c.Context)
	defer stop()
	eng, err := newEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	ws, id := c.String("workspace"), c.String("id")
	if existing != nil && ws == "" && (id == "" || !eng.Store().Exists(id)) {
		return withCode(exitUsage, errors.New("mcp: without an agent file, name the workspace: cairn mcp --workspace DIR [--tools DIR]"))
	}
	if ws != "" {
		if ws, err = filepath.Abs(ws); err != nil {
			return err
		}
	}
	// Without --id, the new agent is made at the first call: a client
	// that starts the server only to list its tools leaves no agent.
	sess, err := eng.OpenSession(ctx, host.SessionOptions{Agent: af, Existing: existing, ID: id,
		Workspace: ws, OnEvent: mcpEvents(c.App.ErrWriter), AtFirstCall: id == ""})
	if err != nil {
		return runError(err)
	}
	defer sess.Close()
	go func() {
		select {
		case <-sess.Paused():
			fmt.Fprintf(c.App.ErrWriter, "cairn mcp: agent %s paused on request; it takes no more calls: the calls asked are answered, and cairn mcp exits\n",
				sess.ID())
		case <-ctx.Done():
		}
	}()
	srv, err := mcp.NewServer(sess, mcp.Options{Version: version, SessionIdle: idle})
	if err != nil {
		return err
	}
	agent := "agent " + sess.ID()
	if id == "" {
		agent += " (made at the first call)"
	}
	if ln != nil {
		if err := serveHTTP(ctx, c.App.ErrWriter, srv, agent, sess, ln, token); err != nil {
			return err
		}
		return pausedExit(sess)
	}
	fmt.Fprintf(c.App.ErrWriter, "cairn mcp: %s serves %s on stdio (workspace %s)\n",
		agent, plural.Count(len(sess.Tools()), "tool"), sess.Workspace())
	// A client gone is found by a write to it failing, which stops its
	// calls: stdout is not the one that drops what it writes once its
	// reader is gone (SIGPIPE is survived, see survivePipes).
	stdout := c.App.Writer
	if d, ok := stdout.(*dropClosed); ok {
		stdout = d.w
	}
	// Once the agent is paused, the input ends: the requests read are
	// answered (a call then refused as paused), and the session ends.
	if err := srv.ServeIO(ctx, endOn(c.App.Reader, sess.Paused(), ctx.Done()), stdout); err != nil && ctx.Err() == nil {
		return err
	}
	return pausedExit(sess)
}

// pausedExit is the end of a session: nil, or, for one whose agent was
// paused, the paused exit code with what goes on.
func pausedExit(sess *host.Session) error {
	select {
	case <-sess.Paused():
		return withCode(exitPaused, fmt.Errorf("agent %s paused on request: its session ended once the calls asked were answered; %s goes on",
			sess.ID(), sess.GoesOn()))
	default:
		return nil
	}
}

// endOn is r, whose end comes early once end is closed: what r gives
// then is not read. done ends the watch.
func endOn(r io.Reader, end, done <-chan struct{}) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(err)
	}()
	go func() {
		select {
		case <-end:
			pw.Close()
		case <-done:
		}
	}()
	return pr
}

// mcpAgent is the agent file -f names, or the one --tools makes; for the
// latter, existing decides what an existing agent is served with (see
// mcpExisting).
func mcpAgent(c *cli.Context) (af *host.AgentFile, existing func(*host.AgentFile) (*host.AgentFile, error), err error) {
	file, dirs := c.String("file"), c.StringSlice("tools")
	switch {
	case file != "" && len(dirs) > 0:
		return nil, nil, withCode(exitUsage, errors.New("mcp: give -f AGENT_FILE or --tools DIR, not both"))
	case file != "":
		if af, err = host.LoadAgentFile(file); err != nil {
			return nil, nil, withCode(exitUsage, err)
		}
		return af, nil, nil
	}
	if af, err = mcp.ToolsAgent(dirs); err != nil {
		return nil, nil, withCode(exitUsage, err)
	}
	return af, mcpExisting(af, len(dirs) > 0, c.String("id")), nil
}

// mcpExisting is what an existing agent is served with without -f: the
// agent file it was made with, its approval rules, model and limits kept,
// as `cairn run --id` runs it. --tools (withTools, which made tools)
// replaces only an agent that `cairn mcp` made without -f, which has
// nothing else to lose; for any other it is refused.
func mcpExisting(tools *host.AgentFile, withTools bool, id string) func(*host.AgentFile) (*host.AgentFile, error) {
	return func(made *host.AgentFile) (*host.AgentFile, error) {
		switch {
		case !withTools:
			return made, nil
		case mcp.MadeByTools(made):
			return tools, nil
		}
		return nil, withCode(exitUsage, fmt.Errorf("mcp: agent %s was made with an agent file of its own (%s), whose tools, grants and approval rules --tools would replace: "+
			"serve it as it is with `cairn mcp --id %s` (no --tools), give -f AGENT_FILE to serve another agent file, or give another --id for a new agent",
			id, cmp.Or(made.File, "name: "+made.Name), id))
	}
}

// listen takes addr for --http.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case err == nil:
		return ln, nil
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("mcp: cannot serve on %s: %w: another process (another `cairn mcp --http`?) listens there; "+
			"give another --http address (a port of 0, as in 127.0.0.1:0, takes any free one, printed on start); no agent was made or changed", addr, err)
	}
	return nil, withCode(exitUsage, fmt.Errorf("mcp: cannot serve on %s: %w; give another --http address, HOST:PORT of this machine "+
		"(a port of 0, as in 127.0.0.1:0, takes any free one, printed on start); no agent was made or changed", addr, err))
}

// serveHTTP serves srv on ln until ctx ends (a signal); then the calls
// in flight stop and are answered saying so, as on stdio, and the server
// shuts down. So it does once the agent is paused, the requests being
// served answered first. The requests' contexts are not ctx's: ended at the signal,
// they would end the requests before their answers (srv.Close stops the
// calls).
func serveHTTP(ctx context.Context, stderr io.Writer, srv *mcp.Server, agent string, sess *host.Session, ln net.Listener, token string) error {
	hs := &http.Server{Handler: srv.Handler(token), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "cairn mcp: %s serves %s on http://%s/ (workspace %s)\n",
		agent, plural.Count(len(sess.Tools()), "tool"), ln.Addr(), sess.Workspace())
	var posts atomic.Int64
	hs.Handler = countPosts(&posts, hs.Handler)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(mcp.Listener(ln)) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	case <-sess.Paused():
		// Every call from now on is refused: the requests being served
		// are let answer (the call that came to the pause, the calls
		// refused), within 10 s, before the server stops.
		for deadline := time.Now().Add(10 * time.Second); posts.Load() > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if ctx.Err() != nil {
		srv.Stop(context.Cause(ctx))
	} else {
		srv.Close()
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if hs.Shutdown(shut) != nil {
		hs.Close()
	}
	return nil
}

// countPosts counts, in n, the POSTs next is serving: each carries
// requests and ends once they are answered.
func countPosts(n *atomic.Int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			n.Add(1)
			defer n.Add(-1)
		}
		next.ServeHTTP(w, r)
	})
}

// mcpEvents tells on stderr what each call came to. What cairn did not
// write itself (a denial's reason may be an MCP client's words) is
// printed escaped, each on its line.
func mcpEvents(w io.Writer) host.EventFunc {
	return func(e host.Event) {
		switch e.Type {
		case host.EventToolEnd:
			fmt.Fprintf(w, "cairn mcp: round %d %s %s %s (%.1f ms)\n", e.Round, terminalLine(e.Call.ID), terminalLine(e.Call.Tool),
				terminalLine(string(e.Call.Outcome)), e.Call.DurationMS)
		case host.EventApprovalDecided:
			if e.Status == "denied" {
				fmt.Fprintf(w, "cairn mcp: round %d %s %s denied: %s\n", e.Round, terminalLine(e.Call.ID), terminalLine(e.Call.Tool), terminalLine(e.Reason))
			}
		case host.EventAgentResumed:
			for _, s := range e.Sealed {
				fmt.Fprintf(w, "cairn mcp: sealed call %s (%s), interrupted while %s; effects: %s\n",
					terminalLine(s.Call), terminalLine(s.Tool), terminalLine(string(s.Phase)), terminalLine(string(s.Effects)))
			}
		case host.EventWarning:
			fmt.Fprintf(w, "cairn mcp: warning: %s\n", terminalLine(e.Text))
		}
	}
}
