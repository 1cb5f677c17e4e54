package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// TestReadmeCommands runs every command form README.md and docs/cli.md
// show, exactly as written, against a real store: the spans of its command table, the
// lines of its code blocks that run cairn, and every other span that gives
// a command more than its name (a bare `cairn resume` in prose names the
// command; it must exist). Optional parts are all given, the first of
// alternatives is taken, and each placeholder (AGENT, CALL, DIR, ...) is a
// real value made for the form: an agent that has run, a call that awaits
// approval, a bookmark. Every form must exit 0, and every command must
// appear in some form, so README and the binary cannot drift apart. Each
// form runs as a process of its own, as a reader would run it, in the
// fixture's directory: so the test runs in parallel with the others.
func TestReadmeCommands(t *testing.T) {
	t.Parallel()
	forms, names := readmeForms(t, "../../README.md")
	cli, cliNames := readmeForms(t, "../../docs/cli.md")
	forms, names = append(forms, cli...), append(names, cliNames...)
	fx := newReadmeFixture(t)
	shown := map[string]bool{}
	for _, form := range forms {
		args := fx.expand(form)
		shown[args[0]] = true
		run := fx.cairn
		if args[0] == "serve" {
			run = fx.serveUntilReady
		}
		code, out, errOut := run(args...)
		if code != exitDone {
			t.Errorf("README's `%s` ran as %q: exit %d\nstdout: %s\nstderr: %s", form, args, code, out, errOut)
		}
	}
	for _, n := range names {
		if n != "help" && findCommand(newApp(nil, nil, nil).Commands, n) == nil {
			t.Errorf("README names `cairn %s`, which is no command", n)
		}
	}
	for _, c := range newApp(nil, nil, nil).Commands {
		if !shown[c.Name] {
			t.Errorf("README shows no form of `cairn %s`", c.Name)
		}
	}
	if len(forms) < 20 {
		t.Fatalf("found %d forms in README; the reader lost them: %q", len(forms), forms)
	}
}

var spanRE = regexp.MustCompile("`(cairn [^`]+)`")

// readmeForms returns README's command forms (without "cairn ") and the
// commands it only names.
func readmeForms(t *testing.T, path string) (forms, names []string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	inCode := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			if f, ok := codeForm(line); ok {
				forms = append(forms, f)
			}
			continue
		}
		table := strings.HasPrefix(line, "| `cairn ")
		if table {
			line = strings.SplitN(strings.ReplaceAll(line, `\|`, "¦"), "|", 3)[1]
		}
		for _, m := range spanRE.FindAllStringSubmatch(line, -1) {
			f := strings.ReplaceAll(strings.TrimPrefix(m[1], "cairn "), "¦", "|")
			if !table && !strings.Contains(f, " ") {
				names = append(names, strings.TrimSuffix(f, "'s"))
				continue
			}
			forms = append(forms, f)
		}
	}
	return forms, names
}

// codeForm reads a code block's line that runs cairn, without its comment.
func codeForm(line string) (string, bool) {
	line, _, _ = strings.Cut(line, "#")
	line = strings.TrimSpace(line)
	for _, prefix := range []string{"cairn ", "go run ./cmd/cairn "} {
		if f, ok := strings.CutPrefix(line, prefix); ok {
			return f, true
		}
	}
	return "", false
}

var (
	optionalRE = regexp.MustCompile(`\[([^\[\]]*)\]`)
	tokenRE    = regexp.MustCompile(`P:NAME|K=V|[A-Z][A-Z_]*(\.json|\.wasm)?`)
)

// readmeFixture makes the values of README's placeholders in a directory
// laid out like the repository's root, which the forms run in.
type readmeFixture struct {
	t     *testing.T
	root  string
	n     int
	prog  string   // a WASI command module that lists the directories it is given
	store string   // CAIRN_STORE of the forms
	env   []string // the forms' environment: CAIRN_STORE and CAIRN_CACHE set
}

func newReadmeFixture(t *testing.T) *readmeFixture {
	root := t.TempDir()
	for _, f := range []string{"examples/hello/agent.yaml", "examples/hello/script.yaml", "examples/hello/workspace/notes.md",
		"examples/hello/workspace/todo.txt", "examples/tools/textstats/textstats.wasm"} {
		copyFile(t, filepath.Join("../..", f), filepath.Join(root, f))
	}
	flows, err := filepath.Glob("../../examples/workflow/*.yaml")
	must(t, err)
	for _, f := range append(flows, "../../examples/workflow/workspace/notes.md") {
		f = strings.TrimPrefix(f, "../../")
		copyFile(t, filepath.Join("../..", f), filepath.Join(root, f))
	}
	fx := &readmeFixture{t: t, root: root, prog: listProgram(t), store: filepath.Join(root, "store")}
	copyFile(t, fx.prog, filepath.Join(root, "prog.wasm"))
	fx.env = append(os.Environ(), "CAIRN_STORE="+fx.store, "CAIRN_CACHE="+cacheForTests(t))
	return fx
}

// expand turns a form into the arguments it stands for.
func (fx *readmeFixture) expand(form string) []string {
	for optionalRE.MatchString(form) {
		form = optionalRE.ReplaceAllStringFunc(form, func(m string) string {
			inner := m[1 : len(m)-1]
			first, _, _ := strings.Cut(inner, " | ")
			return first
		})
	}
	form = strings.ReplaceAll(form, "...", "")
	fields := strings.Fields(form)
	cmd := fields[0]
	if cmd == "tools" || cmd == "workflow" || cmd == "memory" {
		cmd += " " + fields[1]
	}
	vals := map[string]string{}
	var args []string
	for _, f := range fields {
		if alt, _, ok := strings.Cut(f, "|"); ok {
			f = alt
		}
		args = append(args, tokenRE.ReplaceAllStringFunc(f, func(p string) string {
			if v, ok := vals[p]; ok {
				return v
			}
			vals[p] = fx.value(cmd, p, vals)
			return vals[p]
		}))
	}
	return args
}

// value makes the value of placeholder p in a form of command cmd; vals
// holds the form's values made so far (AGENT comes before CALL).
func (fx *readmeFixture) value(cmd, p string, vals map[string]string) string {
	fx.n++
	switch p {
	case "AGENT":
		switch cmd {
		case "approve", "deny":
			return fx.awaiting()
		case "pause":
			return fx.held()
		}
		return fx.agent()
	case "AGENT_FILE":
		return "examples/hello/agent.yaml"
	case "ID":
		switch cmd {
		case "events":
			return fx.lastRun(vals["AGENT"])
		case "workflow resume", "workflow show":
			return fx.workflow(cmd == "workflow resume")
		}
		return fmt.Sprintf("readme-%d", fx.n)
	case "WORKFLOW": // cairn pause WORKFLOW
		return fx.workflowRunning()
	case "FLOW_FILE":
		return "examples/workflow/flow.yaml"
	case "NAMESPACE":
		return fx.fact()
	case "KEY":
		return "k"
	case "NEW":
		return fmt.Sprintf("fork-%d", fx.n)
	case "CHILD":
		return vals["AGENT"] // an agent is an agent of its own tree
	case "CALL":
		return "call_1_0"
	case "DIR":
		if cmd == "fork" || cmd == "resume" { // a directory the store fills
			return filepath.Join(fx.root, fmt.Sprintf("forked-%d", fx.n))
		}
		return fx.workspace()
	case "L":
		if cmd == "fork" {
			return fx.bookmark(vals["AGENT"])
		}
		return fmt.Sprintf("label-%d", fx.n)
	case "N":
		if cmd == "diff" || cmd == "fork" || cmd == "log" {
			return fx.changedRound(vals["AGENT"])
		}
		if cmd == "verify" {
			return "1" // the round of call_1_0
		}
		return "10"
	case "HOST":
		if cmd == "serve" {
			return "127.0.0.1"
		}
		return fx.workspace()
	case "PORT":
		return "0"
	case "MODULE.wasm":
		if cmd == "exec" {
			return fx.prog
		}
		return fx.copyOf("examples/tools/textstats/textstats.wasm")
	case "FILE.json":
		return fx.manifestJSON()
	case "FILE":
		if cmd == "import" {
			return fx.exported()
		}
		return filepath.Join(fx.root, fmt.Sprintf("agent-%d.cairn", fx.n))
	}
	return map[string]string{
		"P:NAME": "script:examples/hello/script.yaml", "PROMPT": "Summarise the notes.",
		"QUESTION": "What did you find?", "TEXT": "not now", "USD": "1", "D": "1m", "SIZE": "64MiB",
		"GUEST": "/data", "ARGS": "/data", "K=V": "K=V", "OUT": filepath.Join(fx.root, fmt.Sprintf("out-%d.wasm", fx.n)),
		"T": "team", "P": "someone", "C": "ticket-1", "COMMAND": "run", "ALLOW": "127.0.0.1:1", "METHOD": "GET",
	}[p]
}

// cairn runs the built command in the fixture's directory and
// environment, and returns its exit code and what it printed.
func (fx *readmeFixture) cairn(args ...string) (int, string, string) {
	fx.t.Helper()
	cmd := fx.command(args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		fx.t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// command is the built command with args, in the fixture's directory and
// environment.
func (fx *readmeFixture) command(args ...string) *exec.Cmd {
	cmd := exec.Command(cairnBinary(fx.t), args...)
	cmd.Dir, cmd.Env = fx.root, fx.env
	return cmd
}

// run runs cairn for the fixture and fails the test unless it exits with code.
func (fx *readmeFixture) run(code int, args ...string) string {
	fx.t.Helper()
	got, out, errOut := fx.cairn(args...)
	if got != code {
		fx.t.Fatalf("cairn %q: exit %d, want %d\n%s%s", args, got, code, out, errOut)
	}
	return out
}

// agent is a new agent that has run the example to its end.
func (fx *readmeFixture) agent() string {
	id := fmt.Sprintf("hello-%d", fx.n)
	fx.run(exitDone, "run", "-f", "examples/hello/agent.yaml", "--id", id, "--workspace", fx.workspace())
	return id
}

// serveUntilReady runs cairn serve, stops it with an interrupt once it
// has printed its token, and returns how it ended.
func (fx *readmeFixture) serveUntilReady(args ...string) (code int, stdout, stderr string) {
	t := fx.t
	t.Helper()
	cmd := fx.command(args...)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	pipe, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var out strings.Builder
	lines := bufio.NewScanner(pipe)
	for lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), "token: ") {
			must(t, cmd.Process.Signal(os.Interrupt))
		}
	}
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// exported is a file that cairn export wrote of an agent that ran in a
// store of its own, so that importing it here makes a new agent.
func (fx *readmeFixture) exported() string {
	store := filepath.Join(fx.root, fmt.Sprintf("elsewhere-%d", fx.n))
	id, file := fmt.Sprintf("moved-%d", fx.n), filepath.Join(fx.root, fmt.Sprintf("moved-%d.cairn", fx.n))
	fx.run(exitDone, "run", "--store", store, "-f", "examples/hello/agent.yaml", "--id", id, "--workspace", fx.workspace())
	fx.run(exitDone, "export", "--store", store, "-o", file, id)
	return file
}

// held is an agent whose lock this process holds until the test ends, as
// a process that runs it would: `cairn pause` has a run to ask.
func (fx *readmeFixture) held() string {
	id := fx.agent()
	store, err := checkpoint.OpenFileStore(fx.store)
	must(fx.t, err)
	lock, err := store.Lock(id, checkpoint.ThisProcess("run-readme"))
	must(fx.t, err)
	fx.t.Cleanup(func() { lock.Unlock() })
	return id
}

// awaiting is a new agent whose call call_1_0 awaits approval.
func (fx *readmeFixture) awaiting() string {
	dir := filepath.Join(fx.root, fmt.Sprintf("ask-%d", fx.n))
	must(fx.t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	must(fx.t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(
		"turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: hi}}]\n  - text: done\n"), 0o644))
	must(fx.t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte("name: ask\nmodel: {provider: script, script: script.yaml}\n"+
		"workspace: workspace\ntools: [{module: builtin, only: [write_file]}]\napprovals: [{tool: write_file, action: ask}]\n"), 0o644))
	id := filepath.Base(dir)
	fx.run(exitApproval, "run", "-f", filepath.Join(dir, "agent.yaml"), "--id", id)
	return id
}

func (fx *readmeFixture) lastRun(agent string) string {
	var runs []host.RunView
	for _, line := range strings.Split(strings.TrimSpace(fx.run(exitDone, "runs", "--json", agent)), "\n") {
		var r host.RunView
		must(fx.t, json.Unmarshal([]byte(line), &r))
		runs = append(runs, r)
	}
	return runs[len(runs)-1].Run
}

func (fx *readmeFixture) bookmark(agent string) string {
	label := fmt.Sprintf("mark-%d", fx.n)
	fx.run(exitDone, "snapshot", "--label", label, agent)
	return label
}

func (fx *readmeFixture) changedRound(agent string) string {
	var d struct{ Round int }
	must(fx.t, json.Unmarshal([]byte(fx.run(exitDone, "diff", "--json", agent)), &d))
	return fmt.Sprint(d.Round)
}

// workspace is a new copy of the example's workspace, with a tool module in it.
func (fx *readmeFixture) workspace() string {
	dir := filepath.Join(fx.root, fmt.Sprintf("ws-%d", fx.n))
	for _, f := range []string{"notes.md", "todo.txt"} {
		copyFile(fx.t, filepath.Join(fx.root, "examples/hello/workspace", f), filepath.Join(dir, f))
	}
	copyFile(fx.t, filepath.Join(fx.root, "examples/tools/textstats/textstats.wasm"), filepath.Join(dir, "textstats.wasm"))
	return dir
}

func (fx *readmeFixture) copyOf(f string) string {
	dst := filepath.Join(fx.root, fmt.Sprintf("copy-%d-%s", fx.n, filepath.Base(f)))
	copyFile(fx.t, filepath.Join(fx.root, f), dst)
	return dst
}

// manifestJSON is the example tool's manifest as a JSON file.
func (fx *readmeFixture) manifestJSON() string {
	wasm, err := os.ReadFile(filepath.Join(fx.root, "examples/tools/textstats/textstats.wasm"))
	must(fx.t, err)
	m, err := abi.ReadManifest(wasm)
	must(fx.t, err)
	b, err := json.Marshal(m)
	must(fx.t, err)
	path := filepath.Join(fx.root, fmt.Sprintf("manifest-%d.json", fx.n))
	must(fx.t, os.WriteFile(path, b, 0o644))
	return path
}

// listProgram builds a WASI command that lists the directories named by
// its arguments, and prints the arguments that are flags, in a module of
// its own.
func listProgram(t *testing.T) string {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module prog\n\ngo 1.25\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(`package main

import (
	"fmt"
	"os"
)

func main() {
	for _, d := range os.Args[1:] {
		if d[0] == '-' || ('0' <= d[0] && d[0] <= '9') {
			fmt.Println("argument", d)
			continue
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, e := range entries {
			fmt.Println(e.Name())
		}
	}
}
`), 0o644))
	out := filepath.Join(dir, "prog.wasm")
	// -trimpath: the module's bytes do not name the temporary directory, so
	// the compile cache knows them from the run before.
	build := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	build.Dir, build.Env = dir, append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOFLAGS=", "GOWORK=off")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the listing program: %v\n%s", err, b)
	}
	return out
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	must(t, err)
	must(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	must(t, os.WriteFile(dst, b, 0o644))
}
