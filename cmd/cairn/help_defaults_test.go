package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
			for _, line := range helpFlagLines(out) {
				if zero.MatchString(line) || strings.Count(line, "(default:") > 1 {
					t.Errorf("cairn %s --help:\n%s", strings.Join(args, " "), line)
				}
			}
		}
	}
	walk(nil, newApp(nil, nil, nil).Commands)
}

// With $CAIRN_STORE set, the help of --store that a process showed after
// it had parsed its flags once (a chat's /resume --help) gave two
// defaults, its own and the variable's value; so did --cache with
// $CAIRN_CACHE and --engine with $CAIRN_ENGINE. Each names its own
// default, once, whatever the environment holds. The chat is a process of
// its own: the flags it parses are the process's.
func TestHelpInAChatNamesNoVariablesValueAsADefault(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(cairnBinary(t), "chat", "-f", "../../examples/hello/agent.yaml", "--id", "c",
		"--workspace", t.TempDir(), "--store", filepath.Join(dir, "store"), "--cache", cacheForTests(t))
	cmd.Env = append(os.Environ(), "CAIRN_STORE=/env/store", "CAIRN_CACHE=/env/cache", "CAIRN_ENGINE=interpreter")
	cmd.Stdin = strings.NewReader("/resume --help\n/resume --help\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	lines := helpFlagLines(string(out))
	if len(lines) < 10 {
		t.Fatalf("chat's /resume --help printed no flags:\n%s", out)
	}
	for _, line := range lines {
		if strings.Contains(line, "/env/") || strings.Contains(line, `"interpreter"`) || strings.Count(line, "(default:") > 1 {
			t.Errorf("/resume --help in a chat:\n%s", line)
		}
	}
}

// helpFlagLines are the lines of a help text that describe a flag.
func helpFlagLines(help string) []string {
	var lines []string
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			lines = append(lines, line)
		}
	}
	return lines
}
