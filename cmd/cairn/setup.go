package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/mcp"
	"github.com/cairnrun/cairn/host/model"
	"github.com/cairnrun/cairn/host/workflow"
	"github.com/cairnrun/cairn/sandbox"
)

// The names of the flags shared by the commands that open the store or
// run modules. Each flag is made anew for each command by its new...Flag:
// urfave/cli keeps in a flag the value it applied from a variable
// ($CAIRN_STORE, …), so a flag shared by every app of a process (a chat's
// /resume, a library user's second app) would keep the first app's value
// after the variable was unset or changed.
const (
	storeFlag  = "store"
	cacheFlag  = "cache"
	engineFlag = "engine"
	jsonFlag   = "json"
)

// Each names its default in DefaultText: the value a variable gave the
// flag is no default of it.
func newStoreFlag() cli.Flag {
	return &cli.StringFlag{Name: storeFlag, EnvVars: []string{"CAIRN_STORE"}, DefaultText: "the user's data directory",
		Usage: "directory of the agents' journals and snapshots, or a PostgreSQL database: a URL (postgres://…) or a key=value connection string (host=… dbname=…)"}
}

func newCacheFlag() cli.Flag {
	return &cli.StringFlag{Name: cacheFlag, EnvVars: []string{"CAIRN_CACHE"}, DefaultText: "the user's cache directory",
		Usage: "directory of compiled tool modules"}
}

func newEngineFlag() cli.Flag {
	return &cli.StringFlag{Name: engineFlag, EnvVars: []string{"CAIRN_ENGINE"}, DefaultText: "auto",
		Usage: "how tool modules run: compiler, interpreter, or auto (compile; with memory limited below 512 MiB, compile a module the compile cache lacks in a process of its own)"}
}

// newJSONFlag is --json of the commands that print events.
func newJSONFlag() cli.Flag {
	return &cli.BoolFlag{Name: jsonFlag, Usage: "print events as JSON Lines, one object per line with a \"type\" field"}
}

// newListJSONFlag is --json of the commands that print listings and
// reports rather than events.
func newListJSONFlag() cli.Flag {
	return &cli.BoolFlag{Name: jsonFlag, Usage: "print JSON Lines instead, one object per line"}
}

// storeDir is --store, or cairn's directory in the user's data directory.
func storeDir(c *cli.Context) string {
	if d := c.String(storeFlag); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "cairn")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "cairn")
	}
	return ".cairn"
}

// openStore opens the store --store names: a PostgreSQL database for a
// URL (postgres:// or postgresql://, in any case) or a key=value
// connection string (pgstore.IsConnString), else a directory, which only
// the commands that make agents (makesAgents) make: for any other, a
// store directory that is not there is a mistyped --store, refused with
// errNoStore. (A namespace of a store that is there is made as needed.)
// No error repeats a password --store holds (pgstore.Redact).
func openStore(c *cli.Context) (checkpoint.Store, error) {
	dir, ns := storeDir(c), c.String(namespaceFlag)
	if err := checkpoint.CheckNamespace(ns); err != nil {
		return nil, withCode(exitUsage, fmt.Errorf("--namespace: %w", err))
	}
	if pgstore.IsConnString(dir) {
		s, err := pgstore.Open(c.Context, dir, pgstore.WithNamespace(ns))
		if errors.Is(err, pgstore.ErrBadURL) {
			return nil, withCode(exitUsage, fmt.Errorf("--store: %w", err))
		}
		return s, err
	}
	if misspeltConnString(dir) {
		return nil, withCode(exitUsage, fmt.Errorf("--store %s reads as a key=value connection string, but it does not start with "+
			"one of PostgreSQL's keywords (host=, port=, dbname=, user=, password=, sslmode=, …); "+
			"to name a directory, give its path (./…)", storeShown(c)))
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) && !makesAgents[c.Command.FullName()] {
		return nil, withCode(exitUsage, fmt.Errorf("%w at %s: --store (or CAIRN_STORE) names the directory where a run keeps its agents", errNoStore, storeShown(c)))
	}
	dir, err := checkpoint.NamespaceDir(dir, ns)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	return host.OpenStore(dir)
}

// misspeltConnString reports whether a --store that is no connection
// string was meant as one: it holds a password=, or it is two or more
// words each of the form key=value. Made a directory, it would put the
// password in a directory's name.
func misspeltConnString(s string) bool {
	if strings.Contains(s, "password=") {
		return true
	}
	words := strings.Fields(s)
	for _, w := range words {
		if !strings.Contains(w, "=") {
			return false
		}
	}
	return len(words) > 1
}

// storeShown is --store as a message may show it: its passwords masked.
func storeShown(c *cli.Context) string { return pgstore.Redact(storeDir(c)) }

// errNoStore: the store a command reads is not there.
var errNoStore = errors.New("no store")

// makesAgents are the commands that make a directory store that is not
// there yet. The tools commands are not among them: they open no store.
var makesAgents = map[string]bool{"run": true, "chat": true, "import": true, "mcp": true, "serve": true,
	"workflow run": true}

// cacheDir is --cache, or cairn's directory in the user's cache directory.
func cacheDir(c *cli.Context) string {
	if d := c.String(cacheFlag); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "cairn", "compiled")
	}
	return ""
}

// cacheMaxEnv bounds the compiled code a run keeps in the compile cache.
const cacheMaxEnv = "CAIRN_CACHE_MAX"

// runCacheMax is the bound a process that compiles keeps the compile
// cache under, from CAIRN_CACHE_MAX: 0 for the default, -1 for none.
func runCacheMax() (int64, error) {
	n, err := parseCacheMax(cacheMaxEnv, os.Getenv(cacheMaxEnv))
	if n == 0 && os.Getenv(cacheMaxEnv) != "" {
		n = 1 // a bound of no bytes: 0 is the default
	}
	return n, err
}

// parseCacheMax reads a bound of the compile cache, given as name: a
// size, or off (-1); "" is 0.
func parseCacheMax(name, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	if v == "off" {
		return -1, nil
	}
	n, err := parseSize(v)
	if err != nil || n < 0 {
		return 0, sizeRefused(name, v, err, "want a size such as 1GiB, or off")
	}
	return n, nil
}

// engineChoice is --engine, or CAIRN_ENGINE for a command without the flag.
func engineChoice(c *cli.Context) (sandbox.Engine, error) {
	name := c.String(engineFlag)
	if name == "" {
		name = os.Getenv("CAIRN_ENGINE")
	}
	e, err := sandbox.ParseEngine(name)
	if err != nil {
		return "", withCode(exitUsage, fmt.Errorf("--engine: %w", err))
	}
	return e, nil
}

// newEngine starts the engine the command runs agents with, on the store.
func newEngine(c *cli.Context) (*host.Engine, error) {
	engine, err := engineChoice(c)
	if err != nil {
		return nil, err
	}
	store, err := openStore(c)
	if err != nil {
		return nil, err
	}
	limit, err := workspaceLimit(c)
	if err != nil {
		return nil, err
	}
	max, err := runCacheMax()
	if err != nil {
		return nil, err
	}
	return host.NewEngine(c.Context, host.Config{CacheDir: cacheDir(c), CacheMax: max, Engine: engine, Store: store, Connect: mcp.Connect, WorkspaceLimit: limit,
		UnkeptAbove: workflow.UnkeptParent})
}

// runError maps an error that kept a run from starting to its exit code.
func runError(err error) error {
	switch {
	case errors.Is(err, checkpoint.ErrLocked):
		return withCode(exitLocked, err)
	case errors.Is(err, host.ErrModuleFileChanged):
		// A module blob a crash kept from the store (or one removed),
		// whose file changed since: no backup is likely to have it, and
		// upgrading goes on with the module as the file has it now. The
		// agent is the one the error names (an id holds no quote).
		return withCode(exitFailed, fmt.Errorf("%w; go on with the agent file and its modules as they are now (cairn resume --upgrade %s), "+
			"or restore the store's blobs/ from a backup to go on with the module it started with, or fork a bookmark of the agent or start it over (cairn run --fresh)",
			err, errAgent(err)))
	case errors.Is(err, host.ErrStoreUnwritable):
		// The run stopped at its last committed round, and the store
		// could not even record that: a resume goes on from that round.
		return withCode(exitPaused, fmt.Errorf("%w; continue with `cairn resume %s`", err, errAgent(err)))
	case errors.Is(err, host.ErrDefinition):
		// Damage to the store, not a wrong command line, though a blob
		// not found is what it is.
		return withCode(exitFailed, fmt.Errorf("%w; restore the store's blobs/ from a backup, or fork a bookmark of the agent or start it over (cairn run --fresh)", err))
	case errors.Is(err, host.ErrNoWorkspace):
		return withCode(exitUsage, fmt.Errorf("%w with --workspace DIR", err))
	case errors.Is(err, checkpoint.ErrNotFound), errors.Is(err, host.ErrNoAgentFile), errors.Is(err, checkpoint.ErrInvalidID),
		errors.Is(err, host.ErrMissing), errors.Is(err, host.ErrSubAgent), errors.Is(err, host.ErrGrant), errors.Is(err, model.ErrScript):
		// The agent file is wrong (a sub-agent or a grant it refuses, a
		// script file that is no script), as `workflow run` says of the
		// same file.
		return withCode(exitUsage, err)
	}
	return err
}

// errAgent is the agent an error names first, as `agent "ID"` (an id
// holds no quote), or AGENT when it names none.
func errAgent(err error) string {
	if _, rest, ok := strings.Cut(err.Error(), `agent "`); ok {
		id, _, _ := strings.Cut(rest, `"`)
		return id
	}
	return "AGENT"
}

// inspect reads the agent the command names as its one argument.
func inspect(c *cli.Context, usage string) (*host.Inspection, error) {
	if c.NArg() != 1 {
		return nil, withCode(exitUsage, errors.New("usage: "+usage))
	}
	store, err := openStore(c)
	if err != nil {
		return nil, err
	}
	in, err := host.Inspect(c.Context, store, c.Args().First())
	if err != nil {
		return nil, runError(agentsBeginning(store, c.Args().First(), workflowNotAgent(store, c.Args().First(), "show", err)))
	}
	return in, nil
}

// workflowNotAgent adds to err, an agent id not found, that the id is a
// workflow's, and the workflow command that does what was asked (cmd).
func workflowNotAgent(store checkpoint.Store, id, cmd string, err error) error {
	ws, ok := store.(checkpoint.Workflows)
	if !ok || !errors.Is(err, checkpoint.ErrNotFound) {
		return err
	}
	if _, werr := ws.Workflow(id); errors.Is(werr, checkpoint.ErrNotFound) {
		return err
	}
	return fmt.Errorf("%w; %s is a workflow: `cairn workflow %s %s`", err, id, cmd, id)
}

// agentsBeginning adds to err, that no agent has the id, the agents whose
// ids it begins (host.AgentsBeginning), and where to see them. Every
// command that takes an agent id refuses so, with the exit code of not
// found. Any other error is returned as it is.
func agentsBeginning(store checkpoint.Store, id string, err error) error {
	err = host.AgentsBeginning(store, id, err)
	if perr := (*host.PrefixError)(nil); errors.As(err, &perr) {
		return fmt.Errorf("%w (`cairn ls` lists them with their trees)", err)
	}
	return err
}

// writeJSON prints v as one line of JSON.
func writeJSON(c *cli.Context, v any) error { return json.NewEncoder(c.App.Writer).Encode(v) }

// modelFlag reads --model PROVIDER:NAME; nil when it is not given. A
// script's path is the command line's, so relative to the working
// directory, not to the agent file.
func modelFlag(c *cli.Context) (*model.Spec, error) {
	m := c.String("model")
	if m == "" {
		return nil, nil
	}
	spec, err := model.ParseModelFlag(m)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	if spec.Script != "" {
		if spec.Script, err = filepath.Abs(spec.Script); err != nil {
			return nil, withCode(exitUsage, fmt.Errorf("--model %q: %w", m, err))
		}
	}
	return &spec, nil
}

// session is what run, resume and ask start from: the --model override,
// a context the first signal ends (see interruptible), and an engine.
type session struct {
	ctx   context.Context
	eng   *host.Engine
	model *model.Spec
	close func()
}

func openSession(c *cli.Context) (*session, error) {
	spec, err := modelFlag(c)
	if err != nil {
		return nil, err
	}
	ctx, stop := interruptible(c.Context)
	eng, err := newEngine(c)
	if err != nil {
		stop()
		return nil, err
	}
	return &session{ctx: ctx, eng: eng, model: spec, close: func() {
		eng.Close(context.Background())
		stop()
	}}, nil
}
