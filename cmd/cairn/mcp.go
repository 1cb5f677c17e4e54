package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/mcp"
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
			&cli.StringFlag{Name: "id", Usage: "the session's agent id; an existing agent continues, a call a crash interrupted sealed (default: a new agent)"},
			&cli.StringFlag{Name: "http", Usage: "serve Streamable HTTP on `ADDR` (e.g. 127.0.0.1:8080) instead of stdio"},
			&cli.StringFlag{Name: "token", EnvVars: []string{"CAIRN_MCP_TOKEN"}, Usage: "with --http: the bearer token clients must send; required for an address other than loopback"},
			storeFlag, cacheFlag, newWorkspaceLimitFlag(),
		},
		Action: mcpAction,
	}
}

func mcpAction(c *cli.Context) error {
	af, err := mcpAgent(c)
	if err != nil {
		return err
	}
	addr, token := c.String("http"), c.String("token")
	if addr != "" {
		if err := mcp.CheckAddr(addr, token); err != nil {
			return withCode(exitUsage, err)
		}
	}
	ctx, stop := interruptible(c.Context)
	defer stop()
	eng, err := newEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	ws := c.String("workspace")
	if ws != "" {
		if ws, err = filepath.Abs(ws); err != nil {
			return err
		}
	}
	sess, err := eng.OpenSession(ctx, host.SessionOptions{Agent: af, ID: c.String("id"),
		Workspace: ws, OnEvent: mcpEvents(c.App.ErrWriter)})
	if err != nil {
		return runError(err)
	}
	defer sess.Close()
	go func() {
		select {
		case <-sess.Paused():
			fmt.Fprintf(c.App.ErrWriter, "cairn mcp: agent %s paused on request; it takes no more calls here (`cairn mcp --id %s` or `cairn resume %s` goes on)\n",
				sess.ID(), sess.ID(), sess.ID())
		case <-ctx.Done():
		}
	}()
	srv, err := mcp.NewServer(sess, mcp.Options{Version: version})
	if err != nil {
		return err
	}
	if addr != "" {
		return serveHTTP(ctx, c.App.ErrWriter, srv, sess, addr, token)
	}
	fmt.Fprintf(c.App.ErrWriter, "cairn mcp: agent %s serves %d tools on stdio (workspace %s)\n",
		sess.ID(), len(sess.Tools()), sess.Workspace())
	if err := srv.ServeIO(ctx, c.App.Reader, c.App.Writer); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// mcpAgent is the agent file -f names, or the one --tools makes.
func mcpAgent(c *cli.Context) (*host.AgentFile, error) {
	file, dirs := c.String("file"), c.StringSlice("tools")
	switch {
	case file != "" && len(dirs) > 0:
		return nil, withCode(exitUsage, errors.New("mcp: give -f AGENT_FILE or --tools DIR, not both"))
	case file != "":
		af, err := host.LoadAgentFile(file)
		if err != nil {
			return nil, withCode(exitUsage, err)
		}
		return af, nil
	}
	af, err := mcp.ToolsAgent(dirs)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	if c.String("workspace") == "" {
		return nil, withCode(exitUsage, errors.New("mcp: without an agent file, name the workspace: cairn mcp --workspace DIR [--tools DIR]"))
	}
	return af, nil
}

// serveHTTP serves srv on addr until ctx ends (a signal); then the calls
// in flight stop, as on stdio, and the server shuts down.
func serveHTTP(ctx context.Context, stderr io.Writer, srv *mcp.Server, sess *host.Session, addr, token string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(token), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	fmt.Fprintf(stderr, "cairn mcp: agent %s serves %d tools on http://%s/ (workspace %s)\n",
		sess.ID(), len(sess.Tools()), ln.Addr(), sess.Workspace())
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	srv.Close()
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if hs.Shutdown(shut) != nil {
		hs.Close()
	}
	return nil
}

// mcpEvents tells on stderr what each call came to.
func mcpEvents(w io.Writer) host.EventFunc {
	return func(e host.Event) {
		switch e.Type {
		case host.EventToolEnd:
			fmt.Fprintf(w, "cairn mcp: round %d %s %s %s (%.1f ms)\n", e.Round, e.Call.ID, e.Call.Tool, e.Call.Outcome, e.Call.DurationMS)
		case host.EventApprovalDecided:
			if e.Status == "denied" {
				fmt.Fprintf(w, "cairn mcp: round %d %s %s denied: %s\n", e.Round, e.Call.ID, e.Call.Tool, e.Reason)
			}
		case host.EventAgentResumed:
			for _, s := range e.Sealed {
				fmt.Fprintf(w, "cairn mcp: sealed call %s (%s), interrupted while %s; effects: %s\n", s.Call, s.Tool, s.Phase, s.Effects)
			}
		case host.EventWarning:
			fmt.Fprintf(w, "cairn mcp: warning: %s\n", e.Text)
		}
	}
}
