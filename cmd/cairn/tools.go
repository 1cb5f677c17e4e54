package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host"
)

func toolsCommand() *cli.Command {
	return &cli.Command{
		Name:  "tools",
		Usage: "list, pack and warm tool modules, and reclaim the compile cache",
		Subcommands: []*cli.Command{{
			Name:  "ls",
			Usage: "list tools and their input schemas, reading manifests without running any module",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "tools", Usage: "a directory of .wasm modules (default: the built-in tools)"},
				&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "list the tools of this agent file instead"},
				newListJSONFlag(),
			},
			Action: toolsLs,
		}, {
			Name:      "pack",
			Usage:     "write a module's manifest into its cairn.manifest section",
			ArgsUsage: "MODULE.wasm",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "where to write the packed module (default: in place)"},
				&cli.StringFlag{Name: "manifest", Usage: "take the manifest from this JSON file instead of asking the module (--cairn-manifest)"},
				newCacheFlag(),
			},
			Action: toolsPack,
		}, toolsWarmCommand(), toolsGCCommand()},
	}
}

func toolsLs(c *cli.Context) error {
	infos, err := listTools(c)
	if err != nil {
		return err
	}
	if c.Bool(jsonFlag) {
		enc := json.NewEncoder(c.App.Writer)
		for _, ti := range infos {
			if err := enc.Encode(ti); err != nil {
				return err
			}
		}
		return nil
	}
	for _, ti := range infos {
		printTool(c.App.Writer, ti)
	}
	return nil
}

func listTools(c *cli.Context) ([]host.ToolInfo, error) {
	if f := c.String("file"); f != "" {
		af, err := host.LoadAgentFile(f)
		if err != nil {
			return nil, withCode(exitUsage, err)
		}
		return host.ListTools(af)
	}
	dir := c.String("tools")
	if dir == "" {
		return host.ModuleTools(host.BuiltinModule, nil)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []host.ToolInfo
	for _, p := range paths {
		wasm, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		infos, err := host.ModuleTools(p, wasm)
		if err != nil {
			fmt.Fprintf(c.App.ErrWriter, "cairn: skipping %v\n", err)
			continue
		}
		out = append(out, infos...)
	}
	return out, nil
}

func printTool(w io.Writer, ti host.ToolInfo) {
	t := ti.Tool
	var flags []string
	if t.Mutates {
		flags = append(flags, "mutates")
	}
	if t.Idempotent {
		flags = append(flags, "idempotent")
	}
	if t.Needs.Workspace != "" {
		flags = append(flags, "workspace:"+string(t.Needs.Workspace))
	}
	// What else it needs granted: the agent file's grant must cover each.
	for _, e := range t.Needs.Env {
		flags = append(flags, "env:"+e)
	}
	if t.Needs.Clock {
		flags = append(flags, "clock")
	}
	if t.Needs.Random {
		flags = append(flags, "random")
	}
	for _, n := range t.Needs.Net {
		flags = append(flags, "net:"+n)
	}
	fmt.Fprintf(w, "%s  (%s) [%s]\n    %s\n", t.Name, ti.Module, strings.Join(flags, " "), t.Description)
	// An MCP server's entry stands for tools whose schemas the server
	// gives when it starts.
	if len(t.InputSchema) > 0 {
		fmt.Fprintf(w, "    input: %s\n", t.InputSchema)
	}
}

func toolsPack(c *cli.Context) error {
	in := c.Args().First()
	if in == "" || c.NArg() > 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn tools pack MODULE.wasm [-o OUT.wasm] [--manifest FILE.json]"))
	}
	wasm, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var manifest []byte
	if f := c.String("manifest"); f != "" {
		if manifest, err = os.ReadFile(f); err != nil {
			return err
		}
	}
	eng, err := packEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	busy := newProgress(c.App.ErrWriter, false)
	busy.set("compiling " + in + " to ask it for its manifest")
	packed, err := eng.Pack(c.Context, wasm, manifest)
	busy.close()
	if err != nil {
		return fmt.Errorf("pack %s: %w", in, err)
	}
	out := c.String("output")
	if out == "" {
		out = in
	}
	if err := os.WriteFile(out, packed, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "packed %s (%d bytes)\n", out, len(packed))
	return nil
}

// packEngine is the engine pack asks a module for its manifest with: on
// the compile cache, without a store, since packing reads and writes only
// the module (a missing store is no reason to refuse it, nor is packing
// one to make it).
func packEngine(c *cli.Context) (*host.Engine, error) {
	engine, err := engineChoice(c)
	if err != nil {
		return nil, err
	}
	max, err := runCacheMax()
	if err != nil {
		return nil, err
	}
	return host.NewEngine(c.Context, host.Config{CacheDir: cacheDir(c), CacheMax: max, Engine: engine})
}
