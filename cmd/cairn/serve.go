package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host/web"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the store's agents over HTTP: a JSON API and a web view to watch and steer them",
		Flags: []cli.Flag{newStoreFlag(), newCacheFlag(),
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:7878",
				Usage: "address to listen on; beyond loopback every request needs the token"},
			&cli.BoolFlag{Name: "read-only", Usage: "serve no request that changes anything"}},
		Action: serveAction,
	}
}

func serveAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return withCode(exitUsage, errors.New("usage: cairn serve [--store DIR] [--addr HOST:PORT] [--read-only]"))
	}
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("listen on %s: %w", c.String("addr"), err))
	}
	ctx, stop := interruptible(c.Context)
	defer stop()
	eng, err := newEngine(c)
	if err != nil {
		ln.Close()
		return err
	}
	defer eng.Close(context.Background())
	addr := ln.Addr().String()
	srv := web.New(web.Config{Engine: eng, ReadOnly: c.Bool("read-only"), Loopback: web.IsLoopback(addr)})
	printServing(c, srv, addr)
	hs := httpServer(ctx, srv, serveLimits)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		stopServing(hs, srv)
	}()
	err = hs.Serve(web.Listener(ln))
	stop() // Serve failed on its own: stop the rest as a signal does
	<-stopped
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// connLimits bound the time a served connection may take. A request's
// body has its own bound (web.Config.BodyTimeout); there is no ReadTimeout
// or WriteTimeout, which would cut an event stream that follows a run for
// hours (web drops a follower that stops reading on its own).
type connLimits struct {
	header time.Duration // to send a request's header
	idle   time.Duration // a connection kept alive waits for its next request
}

// serveLimits are cairn serve's: a browser keeps a connection for its
// next request for less than the idle limit.
var serveLimits = connLimits{header: 10 * time.Second, idle: 2 * time.Minute}

// httpServer is the HTTP server of h within limits, its requests'
// contexts ctx's.
func httpServer(ctx context.Context, h http.Handler, limits connLimits) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: limits.header, IdleTimeout: limits.idle,
		BaseContext: func(net.Listener) context.Context { return ctx }}
}

// stopServing ends a server at a stop: at once the web server begins no
// run and pauses those it holds at their boundary (web.Server.Close),
// while the listener closes and the requests in flight are answered
// (http.Server.Shutdown); it returns when both are done. A resume that a
// request asks for meanwhile is refused, not started behind Close's back.
func stopServing(hs *http.Server, srv *web.Server) {
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		srv.Close()
	}()
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if hs.Shutdown(shut) != nil {
		hs.Close() // requests still unanswered after 5 s: drop them
	}
	<-closed
}

// browserAddr is the address a browser on this machine opens for a server
// that asked to listen on asked and listens on addr: addr itself, but for
// an unspecified host (0.0.0.0, ::, none), on which a browser cannot open
// a page, the loopback address of its family, with every true.
func browserAddr(asked, addr string) (open string, every bool) {
	host, port, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsUnspecified() {
		return addr, false
	}
	loopback := "127.0.0.1"
	if h, _, err := net.SplitHostPort(asked); err == nil && strings.Contains(h, ":") {
		loopback = "::1" // asked for IPv6's every address
	}
	return net.JoinHostPort(loopback, port), true
}

func printServing(c *cli.Context, srv *web.Server, addr string) {
	w := c.App.Writer
	open, every := browserAddr(c.String("addr"), addr)
	fmt.Fprintf(w, "cairn serve: %s on http://%s\n", storeShown(c), open)
	fmt.Fprintf(w, "token: %s\n", srv.Token())
	fmt.Fprintf(w, "open (once): http://%s%s\n", open, srv.LoginPath())
	if every {
		_, port, _ := net.SplitHostPort(addr)
		name, err := os.Hostname()
		if err != nil || name == "" {
			name = "HOST"
		}
		fmt.Fprintf(w, "listening on every address (%s): the links above use the loopback address, for a browser on this machine; from another, use this machine's name or address, such as http://%s\n",
			addr, net.JoinHostPort(name, port))
	}
	if !web.IsLoopback(addr) {
		fmt.Fprintln(w, "beyond loopback: every request needs the token, and it crosses the network in clear text unless a TLS proxy or an SSH tunnel carries it")
	}
	if c.Bool("read-only") {
		fmt.Fprintln(w, "read-only: nothing can be changed through this server")
	}
}
