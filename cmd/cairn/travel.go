package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host"
)

// workspaceLimitFlag names the flag that bounds the workspace a run
// copies into the store.
const workspaceLimitFlag = "workspace-limit"

// newWorkspaceLimitFlag is the flag, made for each command (see
// newNamespaceFlag).
func newWorkspaceLimitFlag() cli.Flag {
	return &cli.StringFlag{Name: workspaceLimitFlag, EnvVars: []string{"CAIRN_WORKSPACE_LIMIT"},
		Usage: "FILES,SIZE: the most files and bytes of a workspace the store keeps a copy of at a run's start (default 20000,1GiB); off keeps none"}
}

// workspaceLimit reads --workspace-limit: "off", or "FILES,SIZE" with a
// size in bytes or with a KiB, MiB or GiB suffix.
func workspaceLimit(c *cli.Context) (host.WorkspaceLimit, error) {
	v := strings.TrimSpace(c.String(workspaceLimitFlag))
	if v == "" {
		return host.WorkspaceLimit{}, nil
	}
	if v == "off" {
		return host.WorkspaceLimit{Off: true}, nil
	}
	files, size, ok := strings.Cut(v, ",")
	n, err := strconv.Atoi(strings.TrimSpace(files))
	b, berr := parseSize(strings.TrimSpace(size))
	if !ok || err != nil || berr != nil || n <= 0 || b <= 0 {
		return host.WorkspaceLimit{}, withCode(exitUsage, fmt.Errorf("--workspace-limit %q: want FILES,SIZE (such as 20000,1GiB) or off", v))
	}
	return host.WorkspaceLimit{Files: n, Bytes: b}, nil
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if rest, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = rest, m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}
