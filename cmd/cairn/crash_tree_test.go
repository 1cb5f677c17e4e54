package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// treeRounds is how many rounds each child of the tree agent takes
// before its answer; each appends a line to its own log and writes a file.
const treeRounds = 4

var treeChildren = []string{"alpha", "beta"}

// treeAgent is a parent that delegates to two children at once and
// writes its task list, then appends a line of its own and marks its tasks
// done; each child appends and writes in every round.
func treeAgent(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	hostileModule(t, bin, dir)
	for _, name := range treeChildren {
		var s strings.Builder
		s.WriteString("turns:\n")
		for i := 1; i <= treeRounds; i++ {
			fmt.Fprintf(&s, "  - tool_calls: [{name: append, input: {path: %[1]s.log, line: %[1]s %[2]d}}, {name: write_file, input: {path: %[1]s-%[2]d.txt, content: \"%[2]d\"}}]\n", name, i)
		}
		fmt.Fprintf(&s, "  - text: %s finished\n", name)
		must(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(s.String()), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(`
turns:
  - tool_calls:
      - {name: delegate, input: {agent: alpha, task: do alpha}}
      - {name: delegate, input: {agent: beta, task: do beta}}
      - {name: todo_write, input: {todos: [{content: alpha, status: in_progress}, {content: beta, status: in_progress}]}}
  - tool_calls:
      - {name: append, input: {path: lead.log, line: lead}}
      - {name: todo_write, input: {todos: [{content: alpha, status: done}, {content: beta, status: done}]}}
  - text: all finished
`), 0o644))
	child := func(name string) string {
		return fmt.Sprintf(`
  - name: %[1]s
    description: does %[1]s
    model: {provider: script, script: %[1]s.yaml}
    tools:
      - {module: builtin, only: [write_file]}
      - {module: hostile.wasm, only: [append], grant: {workspace: rw}}
`, name)
	}
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - {module: builtin, only: [write_file]}
  - {module: hostile.wasm, only: [append], grant: {workspace: rw}}
max_parallel: 2
todos: true
agents:`+child("alpha")+child("beta")), 0o644))
	return agent
}

// treeTrials is how many trials TestKilledTreeResumes runs:
// CAIRN_TREE_TRIALS=200 for the full test, a few otherwise.
func treeTrials(t *testing.T) int {
	if s := os.Getenv("CAIRN_TREE_TRIALS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("CAIRN_TREE_TRIALS=%q: want a number of trials", s)
		}
		return n
	}
	return 3
}

// treeEvent is what this test reads of a JSON event.
type treeEvent struct {
	Type   string    `json:"type"`
	Agent  string    `json:"agent"`
	Call   *treeCall `json:"call"`
	Status string    `json:"status"`
	Sealed []struct {
		Call string `json:"call"`
	} `json:"sealed"`
}

// A real cairn process running a parent with two children in parallel is
// killed with SIGKILL at a random moment; `cairn resume PARENT` finishes
// the tree. After it: no call that had started runs again but the
// parent's delegations, which resume their children; every call that
// ended before the kill is kept, not sealed; each child's answer reaches
// the parent once; every change is in the workspace exactly once (none of
// a sealed call's); the parent's tokens are its own and its children's,
// and, where nothing was sealed, what they are without a kill.
func TestKilledTreeResumes(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	agent := treeAgent(t, bin)
	cache := cacheForTests(t)
	var tokens int64
	full := warmRunTime(t, bin, func() ([]string, func()) {
		store, ws := t.TempDir(), filepath.Join(t.TempDir(), "ws")
		must(t, os.Mkdir(ws, 0o755))
		return []string{"run", "--store", store, "--cache", cache, "--json", "--id", "lead", "--workspace", ws, "-f", agent},
			func() { tokens, _ = treeUsage(t, bin, store) }
	})
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	stats := map[string]int{}
	for range treeTrials(t) {
		delay := time.Duration(rng.Int63n(int64(full)))
		t.Run(fmt.Sprintf("kill-%s", delay.Round(time.Millisecond)), func(t *testing.T) {
			killTreeResume(t, bin, agent, cache, delay, tokens, stats)
		})
	}
	t.Logf("%d trials: %v", treeTrials(t), stats)
}

func killTreeResume(t *testing.T, bin, agent, cache string, delay time.Duration, tokens int64, stats map[string]int) {
	store, ws := t.TempDir(), filepath.Join(t.TempDir(), "ws")
	must(t, os.Mkdir(ws, 0o755))
	cmd := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "lead", "--workspace", ws, "-f", agent)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var out bytes.Buffer
	go io.Copy(&out, stdout)
	time.Sleep(delay)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	started, ended := map[string]bool{}, map[string]bool{}
	for _, e := range jsonLines[treeEvent](out.Bytes()) {
		key := e.Agent + "/" + e.Call.idOr()
		switch {
		case e.Type == "tool_start" && e.Call.Tool != "delegate":
			started[key] = true
		case e.Type == "tool_end":
			ended[key] = true
		}
	}
	res := exec.Command(bin, "resume", "--store", store, "--cache", cache, "--json", "lead")
	resOut, err := res.Output()
	if code := res.ProcessState.ExitCode(); code == exitUsage && len(started) == 0 {
		stats["before any call"]++
		return // killed before the agent was stored
	} else if err != nil {
		t.Fatalf("resume: %v (exit %d)\nkilled run:\n%s\nresume:\n%s", err, code, out.Bytes(), resOut)
	}
	after := jsonLines[treeEvent](resOut)
	sealed := map[string]bool{}
	for _, e := range after {
		switch e.Type {
		case "agent_resumed":
			for _, s := range e.Sealed {
				sealed[e.Agent+"/"+s.Call] = true
			}
		case "tool_start":
			if key := e.Agent + "/" + e.Call.ID; started[key] {
				t.Errorf("call %s had started before the kill and ran again", key)
			}
		}
	}
	for key := range ended {
		if sealed[key] {
			t.Errorf("call %s ended before the kill and was sealed", key)
		}
	}
	if last := after[len(after)-1]; last.Type != "run_end" || last.Status != "done" || last.Agent != "lead" {
		t.Fatalf("resumed run ended %+v\nkilled run:\n%s\nresume:\n%s", last, out.Bytes(), resOut)
	}
	checkTreeWorkspace(t, ws, sealed)
	checkTreeResults(t, bin, store)
	checkTodos(t, bin, store, sealed)
	total, children := treeUsage(t, bin, store)
	if total <= children {
		t.Errorf("the parent's tokens (%d) do not hold its own beside its children's (%d)", total, children)
	}
	if len(sealed) == 0 && total != tokens {
		t.Errorf("the tree's tokens: %d, want %d as in the run that was not killed", total, tokens)
	}
	if t.Failed() {
		t.Logf("killed run:\n%s\nresume:\n%s", out.Bytes(), resOut)
	}
	stats[fmt.Sprintf("sealed %d", len(sealed))]++
}

type treeCall struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
}

func (c *treeCall) idOr() string {
	if c == nil {
		return ""
	}
	return c.ID
}

// checkTreeWorkspace checks that every append and write of every agent of
// the tree is in the workspace once, unless its call was sealed: then not
// at all.
func checkTreeWorkspace(t *testing.T, ws string, sealed map[string]bool) {
	t.Helper()
	isSealed := func(agent, call string) bool {
		for key := range sealed {
			if strings.HasSuffix(key, "/"+call) && strings.Contains(key, agent) {
				return true
			}
		}
		return false
	}
	for _, name := range treeChildren {
		var want strings.Builder
		for i := 1; i <= treeRounds; i++ {
			if !isSealed("."+name+"-", fmt.Sprintf("call_%d_0", i)) {
				fmt.Fprintf(&want, "%s %d\n", name, i)
			}
			got, err := os.ReadFile(filepath.Join(ws, fmt.Sprintf("%s-%d.txt", name, i)))
			sealedWrite := isSealed("."+name+"-", fmt.Sprintf("call_%d_1", i))
			if sealedWrite == (err == nil) || (err == nil && string(got) != strconv.Itoa(i)) {
				t.Errorf("%s-%d.txt: %q, %v (its call sealed: %v)", name, i, got, err, sealedWrite)
			}
		}
		if got := readOrEmpty(t, filepath.Join(ws, name+".log")); got != want.String() {
			t.Errorf("%s.log is\n%s\nwant\n%s", name, got, want.String())
		}
	}
	if got, want := readOrEmpty(t, filepath.Join(ws, "lead.log")), "lead\n"; got != want && !sealed["lead/call_2_0"] {
		t.Errorf("lead.log is %q, want %q", got, want)
	}
}

func readOrEmpty(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// checkTodos checks that the parent's task list is the last one a call
// that was not sealed wrote, and that a fork of the parent has it too.
func checkTodos(t *testing.T, bin, store string, sealed map[string]bool) {
	t.Helper()
	want := `[{"content":"alpha","status":"done"},{"content":"beta","status":"done"}]`
	switch {
	case !sealed["lead/call_2_1"]:
	case !sealed["lead/call_1_2"]:
		want = `[{"content":"alpha","status":"in_progress"},{"content":"beta","status":"in_progress"}]`
	default:
		want = "null"
	}
	if out, err := exec.Command(bin, "fork", "--store", store, "--as", "copy", "--workspace", filepath.Join(t.TempDir(), "copy"), "lead").CombinedOutput(); err != nil {
		t.Fatalf("cairn fork: %v\n%s", err, out)
	}
	for _, id := range []string{"lead", "copy"} {
		out, err := exec.Command(bin, "show", "--store", store, "--json", id).Output()
		var v struct {
			Todos json.RawMessage `json:"todos"`
		}
		if err != nil || json.Unmarshal(out, &v) != nil {
			t.Fatalf("cairn show %s: %v\n%s", id, err, out)
		}
		if got := string(v.Todos); got != want && !(want == "null" && got == "") {
			t.Errorf("the task list of %s: %s, want %s", id, got, want)
		}
	}
}

// checkTreeResults checks that the parent got each child's answer once.
func checkTreeResults(t *testing.T, bin, store string) {
	t.Helper()
	out, err := exec.Command(bin, "log", "--store", store, "--json", "lead").Output()
	if err != nil {
		t.Fatalf("cairn log: %v", err)
	}
	var answers []string
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		var m struct {
			Role     string `json:"role"`
			ToolName string `json:"tool_name"`
			Text     string `json:"text"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ToolName == "delegate" {
			answers = append(answers, m.Text)
		}
	}
	if len(answers) != 2 || answers[0] != "alpha finished" || answers[1] != "beta finished" {
		t.Errorf("the parent's delegation results: %q; want each child's answer once\n%s", answers, out)
	}
}

// treeUsage reads the tokens of the parent and the sum of its children's.
func treeUsage(t *testing.T, bin, store string) (total, children int64) {
	t.Helper()
	out, err := exec.Command(bin, "show", "--store", store, "--json", "lead").Output()
	if err != nil {
		t.Fatalf("cairn show: %v", err)
	}
	type usage struct {
		In  int64 `json:"input_tokens"`
		Out int64 `json:"output_tokens"`
	}
	var v struct {
		Usage    usage `json:"usage"`
		Children []struct {
			Usage usage `json:"usage"`
		} `json:"children"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("cairn show: %v\n%s", err, out)
	}
	if len(v.Children) != 2 {
		t.Errorf("%d children, want 2", len(v.Children))
	}
	for _, c := range v.Children {
		children += c.Usage.In + c.Usage.Out
	}
	return v.Usage.In + v.Usage.Out, children
}
