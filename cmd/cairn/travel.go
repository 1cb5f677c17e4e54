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
		return host.WorkspaceLimit{}, sizeRefused("--workspace-limit", v, berr, "want FILES,SIZE (such as 20000,1GiB) or off")
	}
	return host.WorkspaceLimit{Files: n, Bytes: b}, nil
}

// parseSize reads a size in bytes, or with a KiB, MiB or GiB suffix.
//
// # Errors
//
// A size past what an int64 holds is a *sizeTooLarge, naming the largest
// size in the same unit; a negative size, or anything else that is not a
// whole number, is another error.
func parseSize(s string) (int64, error) {
	num, suffix, mult := s, "", int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			num, suffix, mult = rest, u.suffix, u.mult
			break
		}
	}
	largest := int64(math.MaxInt64) / mult
	n, err := strconv.ParseInt(num, 10, 64)
	if errors.Is(err, strconv.ErrRange) && n > 0 || err == nil && n > largest {
		return 0, &sizeTooLarge{largest: strconv.FormatInt(largest, 10) + suffix}
	}
	if n < 0 {
		return 0, errors.New("a size is 0 or more")
	}
	return n * mult, err
}

// sizeTooLarge is a size of more bytes than an int64 holds.
type sizeTooLarge struct{ largest string }

func (e *sizeTooLarge) Error() string {
	return "more bytes than cairn counts; the largest size is " + e.largest
}

// sizeRefused is the usage error for the value v of name that parseSize
// refused with err, saying want unless the size was too large.
func sizeRefused(name, v string, err error, want string) error {
	var big *sizeTooLarge
	if errors.As(err, &big) {
		want = big.Error()
	}
	return withCode(exitUsage, fmt.Errorf("%s %q: %s", name, v, want))
}
