package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReorderArgs(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"show A --json", "show --json -- A"},
		{"show --json A", "show --json -- A"},
		{"snapshot A --label L --store S", "snapshot --label L --store S -- A"},
		{"fork A --from L --as NEW", "fork --from L --as NEW -- A"},
		{"deny A CALL --reason too risky", "deny --reason too -- A CALL risky"},
		{"ask A q --model bogus:x", "ask --model bogus:x -- A q"},
		{"run -f a.yaml PROMPT --json", "run -f a.yaml --json -- PROMPT"},
		{"run --file=a.yaml PROMPT", "run --file=a.yaml -- PROMPT"},
		{"run -f a.yaml -- --json is a prompt", "run -f a.yaml -- --json is a prompt"},
		{"tools pack M -o OUT", "tools pack -o OUT -- M"},
		{"tools ls --json", "tools ls --json"},
		{"exec --dir .:/w prog.wasm -n 3 --dir x", "exec --dir .:/w -- prog.wasm -n 3 --dir x"},
		{"exec prog.wasm --timeout 1s", "exec -- prog.wasm --timeout 1s"},
		{"show A --help", "show --help"},
		{"show A --json --generate-bash-completion", "show A --json --generate-bash-completion"},
		{"help show", "show --help"}, // help TOPIC is TOPIC --help
		{"--help", "--help"},
		{"run - --json", "run --json -- -"},
	}
	for _, tt := range tests {
		got, err := reorderArgs(newApp(nil, nil, nil).Commands, append([]string{"cairn"}, strings.Fields(tt.in)...))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if want := append([]string{"cairn"}, strings.Fields(tt.want)...); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.in, got, want)
		}
	}
}

// Every way the command line can be wrong exits 2 with the message on
// stderr and prints no help on stdout.
func TestUsageErrorsExitTwoOnStderr(t *testing.T) {
	tests := []struct {
		args string
		msg  string
	}{
		{"", "USAGE"},
		{"nosuch", `no command "nosuch"`},
		{"tools", "needs a command: ls, pack"},
		{"tools nosuch", `no command "nosuch"`},
		{"help nosuch", `no command "nosuch"`},
		{"resume A --max-rounds -3", "--max-rounds cannot be negative"},
		// Regression: an id that cannot be one exited 1.
		{"run -f ../../examples/hello/agent.yaml --id ../evil --store " + t.TempDir(), `agent id "../evil"`},
		{"tools help nosuch", `no command "nosuch"`},
		{"--nosuch", "flag provided but not defined"},
		{"ls --nosuch", "ls: flag provided but not defined: -nosuch"},
		{"show A --nosuch", "show: flag provided but not defined"},
		{"tools pack M.wasm --nosuch", "tools pack: flag provided but not defined"},
		{"show A --store", "show: flag needs a value: --store"},
		{"gc --keep-snapshots many", "invalid value"},
		{"gc --keep-bookmarks -3", "--keep-bookmarks cannot be negative"},
		// Regression: a store URL that cannot be read exited 1.
		{"ls --store postgres://x@127.0.0.1:1/db?lease_ttl=abc", "bad PostgreSQL URL"},
		{"completion fish", "usage: cairn completion"},
		// Regression: --model after the question became part of it.
		{"ask A q --model bogus:x", `unknown provider "bogus"`},
		// Regression: an agent named h or help showed fork's help, exit 0.
		{"fork h --from nope --store " + t.TempDir(), `agent "h": not found`},
		{"show help --store " + t.TempDir(), `agent "help": not found`},
	}
	for _, tt := range tests {
		code, out, errOut := cairn(t, strings.Fields(tt.args)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and stderr saying %q", tt.args, code, out, errOut, tt.msg)
		}
	}
}

// Help asked for goes to stdout and exits 0, wherever --help stands.
func TestHelpWhenAsked(t *testing.T) {
	for _, args := range []string{"help", "--help", "help show", "show --help", "show A --help", "tools pack --help"} {
		code, out, errOut := cairn(t, strings.Fields(args)...)
		if code != exitDone || !strings.Contains(out, "USAGE") || errOut != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// Completion asks the real binary, since urfave/cli reads the words being
// completed from the process's own arguments.
func TestCompletion(t *testing.T) {
	code, out, _ := cairn(t, "completion", "bash")
	if code != exitDone || !strings.Contains(out, "complete -o default -F _cairn_complete cairn") {
		t.Fatalf("exit %d: %s", code, out)
	}
	bin := cairnBinary(t)
	for _, tt := range []struct{ args, want string }{
		{"tools --generate-bash-completion", "ls\npack\n"},
		{"show --st --generate-bash-completion", "--store\n"},
		{"show A --js --generate-bash-completion", "--json\n"},
	} {
		out, err := exec.Command(bin, strings.Fields(tt.args)...).Output()
		if err != nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("%s: %v, %q; want %q in it", tt.args, err, out, tt.want)
		}
	}
}

// Regression: errors repeated their context (`agent "x": agent "x": not
// found`, `not a valid WebAssembly module: fast mode: not a valid
// WebAssembly module`).
func TestErrorsSayTheirContextOnce(t *testing.T) {
	store, bad := t.TempDir(), filepath.Join(t.TempDir(), "bad.wasm")
	must(t, os.WriteFile(bad, []byte("not wasm"), 0o644))
	tests := []struct {
		args string
		once string
	}{
		{"resume nobody", `"nobody"`},
		{"snapshot nobody", `"nobody"`},
		{"fork nobody", `"nobody"`},
		{"fork nobody --from L", `"nobody"`},
		{"approve nobody call_1_0", `"nobody"`},
		{"diff nobody", `"nobody"`},
		{"undo nobody", `"nobody"`},
		{"tools pack " + bad, "not a valid WebAssembly module"},
	}
	t.Setenv("CAIRN_STORE", store)
	for _, tt := range tests {
		code, _, errOut := cairn(t, append(strings.Fields(tt.args), "--cache", cacheForTests(t))...)
		if code == exitDone || strings.Count(errOut, tt.once) != 1 {
			t.Errorf("%s: exit %d, stderr %q; want %s in it once", tt.args, code, errOut, tt.once)
		}
	}
}

// Regression: `run … PROMPT --json` made "--json" part of the prompt.
// Flags after the prompt are read as flags, and an agent that exists
// continues with a new prompt without its agent file.
func TestRunFlagsAfterThePrompt(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	code, out, errOut := cairn(t, append(append([]string{"run"}, args...), "Summarise", "--json", "--id", "late")...)
	if code != exitDone {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := events([]byte(out))
	if len(evs) == 0 || evs[0].Type != "run_start" {
		t.Fatalf("not JSON events:\n%s", out)
	}
	code, out, errOut = cairn(t, "run", "--id", "late", "And now?", "--store", store, "--cache", cacheForTests(t), "--json")
	if code != exitDone || !strings.Contains(out, `"run_end"`) {
		t.Fatalf("continue without -f: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = cairn(t, "run", "--id", "nobody", "hi", "--store", store)
	if code != exitUsage || !strings.Contains(errOut, `agent "nobody" does not exist`) ||
		!strings.Contains(errOut, "cairn run -f AGENT_FILE") || strings.Contains(errOut, "host.") {
		t.Fatalf("continue an agent that does not exist: exit %d %s", code, errOut)
	}
}

// Regression: `cairn help tools` printed the command's name and usage but
// not its subcommands, which `cairn tools --help` lists; help TOPIC is now
// TOPIC --help, down to a subcommand.
func TestHelpOfACommandListsItsSubcommands(t *testing.T) {
	for _, args := range [][]string{{"help", "tools"}, {"help", "workflow"}, {"help", "memory"}} {
		code, out, errOut := cairn(t, args...)
		_, want, _ := cairn(t, args[1], "--help")
		if code != exitDone || out != want || !strings.Contains(out, "COMMANDS:") {
			t.Errorf("%q: exit %d, %q (%s); want what --help prints", args, code, out, errOut)
		}
	}
	code, out, _ := cairn(t, "help", "workflow", "resume")
	if code != exitDone || !strings.Contains(out, "cairn workflow resume - ") {
		t.Errorf("help workflow resume: exit %d, %q", code, out)
	}
}
