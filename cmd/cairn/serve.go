package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host/web"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the store's agents over HTTP: a JSON API and a web view to watch and steer them",
		Flags: []cli.Flag{storeFlag, cacheFlag,
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
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shut)
	}()
	err = hs.Serve(ln)
	srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func printServing(c *cli.Context, srv *web.Server, addr string) {
	w := c.App.Writer
	fmt.Fprintf(w, "cairn serve: %s on http://%s\n", storeDir(c), addr)
	fmt.Fprintf(w, "token: %s\n", srv.Token())
	fmt.Fprintf(w, "open (once): http://%s%s\n", addr, srv.LoginPath())
	if !web.IsLoopback(addr) {
		fmt.Fprintln(w, "beyond loopback: every request needs the token, and it crosses the network in clear text unless a TLS proxy or an SSH tunnel carries it")
	}
	if c.Bool("read-only") {
		fmt.Fprintln(w, "read-only: nothing can be changed through this server")
	}
}
