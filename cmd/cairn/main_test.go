package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// TestMain trims the compile cache the tests share, runs the tests, then
// removes what goBuild built and stops the PostgreSQL server the tests
// share. The commands the tests run keep that cache unbounded
// (CAIRN_CACHE_MAX=off): a bound would remove the files of tools that
// other test binaries, and the next run, compile again.
func TestMain(m *testing.M) {
	trimTestCache(testCache(), 2<<30, time.Hour)
	os.Setenv(cacheMaxEnv, "off")
	// This machine's marks of fills of PostgreSQL stores are the tests'
	// own, not in the user's state directory.
	state, err := os.MkdirTemp("", "cairn-test-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	os.RemoveAll(state)
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	pgtest.StopShared()
	os.Exit(code)
}

// builds are the files made once per test binary (the programs goBuild
// built, the modules packedModule packed), in one directory TestMain
// removes: the tests that run the command, a guest or the test MCP server
// share one build of each.
var builds struct {
	mu   sync.Mutex
	dir  string
	made map[string]*build
}

// A build is one file made once, or why it was not made.
type build struct {
	once sync.Once
	path string
	err  error
}

// madeOnce makes the file of key with mk, given the path to make it at,
// once per test binary, and returns its path. Do not change the file: the
// tests share it.
func madeOnce(t testing.TB, key string, mk func(path string) error) string {
	t.Helper()
	builds.mu.Lock()
	if builds.made == nil {
		builds.made = map[string]*build{}
	}
	b := builds.made[key]
	if b == nil {
		b = &build{path: fmt.Sprintf("prog-%d", len(builds.made))}
		builds.made[key] = b
	}
	var err error
	if builds.dir == "" {
		builds.dir, err = os.MkdirTemp("", "cairn-cmd-test-")
	}
	dir := builds.dir
	builds.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	b.once.Do(func() {
		b.path = filepath.Join(dir, b.path)
		b.err = mk(b.path)
	})
	if b.err != nil {
		t.Fatalf("%s: %v", key, b.err)
	}
	return b.path
}

// goBuild builds the Go package pkg, with env added to the environment,
// once per test binary, and returns the program's path. Do not change
// the file: the tests share it.
func goBuild(t testing.TB, pkg string, env ...string) string {
	t.Helper()
	key := strings.Join(append([]string{"build", pkg}, env...), " ")
	return madeOnce(t, key, func(path string) error {
		cmd := exec.Command("go", "build", "-o", path, pkg)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		return nil
	})
}

// placeBuilt puts the program goBuild built of pkg at dst: a hard link,
// or a copy where one cannot be made.
func placeBuilt(t testing.TB, pkg, dst string, env ...string) {
	t.Helper()
	src := goBuild(t, pkg, env...)
	if os.Link(src, dst) == nil {
		return
	}
	b, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(dst, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// cairn runs the command line in-process and returns its exit code and
// what it printed.
func cairn(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := doMain(append([]string{"cairn"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// cairnProcess runs the command line as a process of its own, the built
// binary, and returns its exit code and what it printed: cairn as a test
// that runs in parallel runs it, since the in-process command's environment
// is the whole test binary's.
func cairnProcess(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// exampleAgent copies the example agent's workspace into a temporary
// directory and returns the flags that run the example on it; the store's
// directory is third from last.
func exampleAgent(t *testing.T) []string {
	t.Helper()
	ws := t.TempDir()
	for _, name := range []string{"notes.md", "todo.txt"} {
		b, err := os.ReadFile(filepath.Join("../../examples/hello/workspace", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"-f", "../../examples/hello/agent.yaml", "--workspace", ws,
		"--store", t.TempDir(), "--cache", cacheForTests(t)}
}

// testCache is the compile cache the tests share, from one test binary to
// the next: a cold compile of a module takes seconds.
var testCache = sync.OnceValue(func() string { return filepath.Join(os.TempDir(), "cairn-cmd-test-cache") })

// trimTestCache keeps the compile cache the tests share from growing
// without end, one compiled module for every build of a test tool: once
// it holds more than limit bytes, the files in it older than age (which
// no test binary running now can have written) are removed, and the tests
// that need them compile them again.
func trimTestCache(dir string, limit int64, age time.Duration) {
	var size int64
	var old []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			size += fi.Size()
			if time.Since(fi.ModTime()) > age {
				old = append(old, path)
			}
		}
		return nil
	})
	if size > limit {
		for _, path := range old {
			os.Remove(path)
		}
	}
}

// cacheForTests is the compile cache the tests share; safe for tests that
// run in parallel.
func cacheForTests(t *testing.T) string { return testCache() }

func TestRunJSONEvents(t *testing.T) {
	code, out, errOut := cairn(t, append([]string{"run", "--json"}, exampleAgent(t)...)...)
	if code != exitDone {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var types []string
	var agent, run string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		typ, _ := e["type"].(string)
		types = append(types, typ)
		if typ == "run_start" {
			agent, _ = e["agent"].(string)
			run, _ = e["run"].(string)
		}
		if typ == "tool_end" {
			call := e["call"].(map[string]any)
			if _, ok := call["duration_ms"]; !ok || call["outcome"] != "ok" {
				t.Errorf("tool_end without duration or not ok: %v", call)
			}
		}
		if typ == "run_end" && e["status"] != "done" {
			t.Errorf("run_end status %v", e["status"])
		}
	}
	if len(types) == 0 || types[0] != "run_start" || types[len(types)-1] != "run_end" || agent == "" || run == "" {
		t.Fatalf("events %v, agent %q run %q", types, agent, run)
	}
	for _, want := range []string{"model_text", "tool_start", "tool_end", "round_end"} {
		if !strings.Contains(strings.Join(types, " "), want) {
			t.Errorf("no %s event in %v", want, types)
		}
	}
}

func TestRunHumanOutput(t *testing.T) {
	code, out, errOut := cairn(t, append([]string{"run"}, exampleAgent(t)...)...)
	if code != exitDone {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{"agent hello-", "→ list_dir", "✓ text_stats", "done after 5 rounds", "I wrote REPORT.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run"}, exitUsage, "file"},
		{[]string{"run", "-f", "no/such/agent.yaml"}, exitUsage, "no/such/agent.yaml"},
		{[]string{"tools", "pack"}, exitUsage, "usage"},
	}
	for _, tt := range tests {
		code, _, errOut := cairn(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d saying %q", tt.args, code, errOut, tt.code, tt.msg)
		}
	}
}

func TestToolsLsBuiltins(t *testing.T) {
	code, out, errOut := cairn(t, "tools", "ls")
	if code != exitDone {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"read_file", "write_file", "edit_file", "list_dir", "glob", "grep"} {
		if !strings.Contains(out, name+"  (builtin)") {
			t.Errorf("tools ls lacks %s:\n%s", name, out)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := cairn(t, "version")
	if code != exitDone || !strings.Contains(out, "tool ABI 1") {
		t.Fatalf("exit %d, %q", code, out)
	}
}

func TestLsAndResumeCommands(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "ex1"}, args...)...); code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	code, out, _ := cairn(t, "ls", "--store", store)
	if code != exitDone || !strings.Contains(out, "ex1") || !strings.Contains(out, "done") {
		t.Fatalf("ls: exit %d\n%s", code, out)
	}
	code, out, _ = cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "ex1")
	if code != exitDone || !strings.Contains(out, "nothing to resume") {
		t.Fatalf("resume of a finished agent: exit %d\n%s", code, out)
	}
	code, _, errOut := cairn(t, "resume", "--store", store, "nobody")
	if code != exitUsage || !strings.Contains(errOut, `"nobody"`) {
		t.Fatalf("resume of an unknown agent: exit %d %s", code, errOut)
	}
	code, _, errOut = cairn(t, "resume", "--store", store, "--strategy", "guess", "ex1")
	if code != exitUsage || !strings.Contains(errOut, "seal, replay or manual") {
		t.Fatalf("bad strategy: exit %d %s", code, errOut)
	}
}

// TestMissingFilesTheAgentFileNames: a workspace, tool module or script
// the agent file names that is not there is a mistake in the command's
// input, exit 2, with what to do, and no agent is made.
func TestMissingFilesTheAgentFileNames(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("turns:\n  - text: hi\n"), 0o644))
	for _, tt := range []struct{ name, agent, want string }{
		{"script", "model: {provider: script, script: nosuch.yaml}\nworkspace: ws\ntools: [{module: builtin}]\n", "nosuch.yaml"},
		{"module", "model: {provider: script, script: s.yaml}\nworkspace: ws\ntools: [{module: nosuch.wasm}]\n", "nosuch.wasm"},
		{"workspace", "model: {provider: script, script: s.yaml}\nworkspace: nows\ntools: [{module: builtin}]\n", "nows"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, tt.name+".yaml")
			must(os.WriteFile(file, []byte("name: t\n"+tt.agent), 0o644))
			store := t.TempDir()
			code, _, errOut := cairn(t, "run", "-f", file, "--store", store, "--id", "m", "--cache", cacheForTests(t))
			advice := "fix the agent file, or make it"
			if tt.name == "workspace" {
				advice = "make that directory, or name one that is: the agent file's `workspace:`, or --workspace"
			}
			if code != exitUsage || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, advice) {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if code, out, _ := cairn(t, "ls", "--store", store); code != 0 || strings.Contains(out, "\nm ") {
				t.Fatalf("ls after the refused run: exit %d\n%s", code, out)
			}
		})
	}
}

// Regression: tools ls showed of a tool's needs only its workspace access,
// so a tool that needs the clock or the network was listed as needing
// nothing; each need the agent file must grant is shown.
func TestToolsLsShowsEveryNeed(t *testing.T) {
	var b strings.Builder
	printTool(&b, host.ToolInfo{Module: "m.wasm", Tool: abi.Tool{Name: "fetch", Needs: abi.Needs{
		Workspace: abi.AccessReadOnly, Env: []string{"TOKEN"}, Clock: true, Random: true, Net: []string{"api.example.com"}}}})
	if want := "fetch  (m.wasm) [workspace:ro env:TOKEN clock random net:api.example.com]"; !strings.HasPrefix(b.String(), want) {
		t.Fatalf("got %q, want it to start %q", b.String(), want)
	}
}

// Regression: a --workspace that is not there was refused with "fix the
// agent file, or make it", though the agent file did not name it, and one
// that is a file failed with exit 1. Both are exit 2, and the advice
// names both places a workspace comes from; no agent is made.
func TestWorkspaceFlagThatIsNoDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	must(t, os.WriteFile(file, []byte("x"), 0o644))
	for _, ws := range []string{filepath.Join(t.TempDir(), "nosuch"), file} {
		store := t.TempDir()
		code, _, errOut := cairn(t, "run", "-f", "../../examples/hello/agent.yaml", "--workspace", ws,
			"--store", store, "--id", "m", "--cache", cacheForTests(t))
		if code != exitUsage || !strings.Contains(errOut, ws) || strings.Contains(errOut, "fix the agent file") ||
			!strings.Contains(errOut, "name one that is: the agent file's `workspace:`, or --workspace") {
			t.Fatalf("--workspace %s: exit %d, stderr %q", ws, code, errOut)
		}
		if code, out, _ := cairn(t, "ls", "--store", store); code != 0 || strings.Contains(out, "\nm ") {
			t.Fatalf("ls after the refused run: exit %d\n%s", code, out)
		}
	}
}
