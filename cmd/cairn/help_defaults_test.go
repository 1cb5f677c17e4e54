package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// A flag whose zero means "not given" showed its zero as its default:
// `cairn fork --help` said --at-round defaults to 0, round 0, where a fork
// without it takes the last committed round; `cairn diff`, `log` and
// `verify` said --round defaults to 0, where they show the last round that
// changed files, every round and every call; `cairn workflow resume`
// said --parallel defaults to 0, which it refuses, and `workflow run` gave
// --parallel two defaults, its own and "0". Every flag's help names the
// default it has, once.
func TestHelpShowsNoZeroDefaultAFlagDoesNotHave(t *testing.T) {
	zero := regexp.MustCompile(`\(default: (0|0s)\)`)
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			args := append(append([]string{}, path...), c.Name)
			if len(c.Subcommands) > 0 {
				walk(args, c.Subcommands)
				continue
			}
			code, out, errOut := cairn(t, append(args, "--help")...)
			if code != exitDone {
				t.Errorf("cairn %s --help: exit %d\n%s", strings.Join(args, " "), code, errOut)
				continue
			}
			for _, line := range strings.Split(out, "\n") {
				if !strings.HasPrefix(strings.TrimSpace(line), "--") {
					continue
				}
				if zero.MatchString(line) || strings.Count(line, "(default:") > 1 {
					t.Errorf("cairn %s --help:\n%s", strings.Join(args, " "), line)
				}
			}
		}
	}
	walk(nil, newApp(nil, nil, nil).Commands)
}
