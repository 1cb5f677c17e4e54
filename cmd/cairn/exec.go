package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/sandbox"
)

func execCommand() *cli.Command {
	return &cli.Command{
		Name:  "exec",
		Usage: "run a WASI command module under the sandbox, as a tool runs",
		Description: "Runs MODULE.wasm once with stdin, stdout and stderr passed through and exits with the\n" +
			"module's exit status. The module sees only the --dir mounts, on cairn's workspace filesystem,\n" +
			"only the --env variables, a fixed clock and deterministic randomness. stdin is streamed and\n" +
			"output is not capped. cairn's own failures exit 1 and say so on stderr, prefixed \"cairn:\".\n" +
			"A --dir without GUEST is mounted at the same path (a relative one under /, so . is /).\n" +
			"The module reaches the network only as --net allows (docs/network.md): HOST, HOST:PORT,\n" +
			"*.DOMAIN or an address, with the --net-method methods (default GET, HEAD); nothing is journaled.\n" +
			fmt.Sprintf("A module past %d MiB, %d functions or a function of %d KiB of code is refused before\n"+
				"it compiles, and compiling stops after %s (see docs/wasi.md).", sandbox.DefaultMaxModuleSize>>20,
				sandbox.DefaultMaxFunctions, sandbox.DefaultMaxFunctionSize>>10, sandbox.DefaultCompileTimeout),
		ArgsUsage: "MODULE.wasm [ARGS...]",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "dir", Usage: "mount host directory HOST at GUEST, read-only with :ro: HOST[:GUEST][:ro]"},
			&cli.StringSliceFlag{Name: "env", Usage: "set K to V in the module's environment: K=V"},
			durationFlag("timeout", sandbox.DefaultTimeout, "stop the module after this long (0: never)"),
			&cli.StringFlag{Name: "memory", Usage: "the module's memory limit, e.g. 64MiB (default 256MiB)"},
			&cli.StringSliceFlag{Name: "net", Usage: "let the module reach HOST through the network import: HOST[:PORT], *.DOMAIN, an address"},
			&cli.StringSliceFlag{Name: "net-method", Usage: "an HTTP method the module may use (with --net; default GET and HEAD)"},
			newCacheFlag(), newEngineFlag(),
		},
		Action: execAction,
	}
}

func execAction(c *cli.Context) error {
	if c.NArg() < 1 {
		return withCode(exitUsage, errors.New("usage: cairn exec [--dir HOST[:GUEST][:ro]]... [--env K=V]... MODULE.wasm [ARGS...]"))
	}
	p, err := execPolicy(c)
	if err != nil {
		return withCode(exitUsage, err)
	}
	wasm, err := os.ReadFile(c.Args().First())
	if err != nil {
		return err
	}
	engine, err := engineChoice(c)
	if err != nil {
		return err
	}
	max, err := runCacheMax()
	if err != nil {
		return err
	}
	rt, err := sandbox.NewRuntime(c.Context, sandbox.Config{CacheDir: cacheDir(c), CacheMax: max, Engine: engine})
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	ex, err := rt.Exec(c.Context, wasm, p, c.App.Reader, c.App.Writer, c.App.ErrWriter)
	if err != nil {
		return fmt.Errorf("exec %s: %w", c.Args().First(), err)
	}
	if ex.Code != 0 {
		return withCode(int(min(ex.Code, 255)), errors.New(""))
	}
	return nil
}

// execPolicy is the sandbox policy the flags describe.
func execPolicy(c *cli.Context) (sandbox.Policy, error) {
	p := sandbox.Policy{
		Args:        c.Args().Tail(),
		Timeout:     c.Duration("timeout"),
		StdinLimit:  math.MaxInt64,
		StdoutLimit: math.MaxInt64,
		StderrLimit: math.MaxInt64,
	}
	if p.Timeout < 0 {
		return p, fmt.Errorf("--timeout %s: want a duration, 0 or more (0: never)", p.Timeout)
	}
	if p.Timeout == 0 {
		p.Timeout = time.Duration(math.MaxInt64)
	}
	if s := c.String("memory"); s != "" {
		size, err := host.ParseSize(s)
		if err != nil {
			return p, fmt.Errorf("--memory: %w", err)
		}
		if size == 0 {
			return p, fmt.Errorf("--memory %s: a module needs memory; give a size such as 64MiB, or leave the flag out for 256MiB", s)
		}
		p.MemoryLimit = int64(size)
	}
	for _, d := range c.StringSlice("dir") {
		m, err := parseMount(d)
		if err != nil {
			return p, err
		}
		p.Mounts = append(p.Mounts, m)
	}
	if allow := c.StringSlice("net"); len(allow) > 0 {
		n, err := host.NetGrant{Allow: allow, Methods: c.StringSlice("net-method")}.Net()
		if err != nil {
			return p, fmt.Errorf("--net: %w", err)
		}
		p.Net = n
	}
	for _, kv := range c.StringSlice("env") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return p, fmt.Errorf("--env %q: want K=V", kv)
		}
		if p.Env == nil {
			p.Env = map[string]string{}
		}
		p.Env[k] = v
	}
	return p, nil
}

// parseMount reads HOST[:GUEST][:ro].
func parseMount(s string) (sandbox.Mount, error) {
	parts := strings.Split(s, ":")
	m := sandbox.Mount{HostPath: parts[0]}
	if n := len(parts); n > 1 && (parts[n-1] == "ro" || parts[n-1] == "rw") {
		m.ReadOnly = parts[n-1] == "ro"
		parts = parts[:n-1]
	}
	switch {
	case len(parts) > 2 || m.HostPath == "":
		return m, fmt.Errorf("--dir %q: want HOST[:GUEST][:ro]", s)
	case len(parts) == 2:
		m.GuestPath = parts[1]
	case filepath.IsAbs(m.HostPath):
		m.GuestPath = filepath.ToSlash(m.HostPath)
	default:
		m.GuestPath = "/" + filepath.ToSlash(filepath.Clean(m.HostPath))
	}
	if m.GuestPath == "/." {
		m.GuestPath = "/"
	}
	if fi, err := os.Stat(m.HostPath); err != nil || !fi.IsDir() {
		return m, fmt.Errorf("--dir %q: %s is not a directory", s, m.HostPath)
	}
	return m, nil
}
