package main

import (
	"errors"
	"fmt"
	"math"
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
// size as parseSize reads it.
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
		return host.WorkspaceLimit{}, sizeRefused("--workspace-limit", v, berr, "want FILES,SIZE (such as 20000,1GiB) or off")
	}
	return host.WorkspaceLimit{Files: n, Bytes: b}, nil
}

// parseSize reads a size given on the command line, as an agent file's
// are read (host.ParseSizeUpTo), of at most what an int64 holds.
//
// # Errors
//
// A size past what an int64 holds is a *host.SizeTooLargeError, naming
// the largest size in the same unit; a negative size, or anything else
// that is not a whole number with an optional unit, is another error.
func parseSize(s string) (int64, error) {
	n, err := host.ParseSizeUpTo(s, math.MaxInt64)
	return int64(n), err
}

// sizeRefused is the usage error for the value v of name that parseSize
// refused with err, saying want unless the size was too large.
func sizeRefused(name, v string, err error, want string) error {
	var big *host.SizeTooLargeError
	if errors.As(err, &big) {
		want = "more bytes than cairn counts; the largest size is " + big.Largest
	}
	return withCode(exitUsage, fmt.Errorf("%s %q: %s", name, v, want))
}
