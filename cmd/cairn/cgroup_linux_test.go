package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cgroupLimit is the memory limit TestExampleUnderMemoryLimit runs the
// example under: a device with 128 MB.
const cgroupLimit = 128 << 20

// The example runs to its end in a cgroup whose memory is limited to
// 128 MiB, first with an empty compile cache (as an edge device's first
// run is) and then with the cache that run filled, on the engine auto
// chooses; then, logged and not failed, cold on the compiler and on the
// interpreter, which a cold run of these tools does not fit. It needs a cgroup it
// can make: a writable cgroup v2 directory, the cgroup v1 memory
// hierarchy, or systemd-run --user; it is skipped when none is there, and
// unless CAIRN_CGROUP=1. Each run may take until the test's deadline (go
// test -timeout); its time, the peak resident memory of the process (and
// of what it started) and the peak the cgroup saw are logged.
//
//	CAIRN_CGROUP=1 go test ./cmd/cairn -run ExampleUnderMemoryLimit -v -timeout 20m
func TestExampleUnderMemoryLimit(t *testing.T) {
	if os.Getenv("CAIRN_CGROUP") != "1" {
		t.Skip("set CAIRN_CGROUP=1 to run the example under a 128 MiB cgroup memory limit")
	}
	cg, err := newMemoryCgroup(t)
	if err != nil {
		t.Skipf("no cgroup to limit memory with: %v", err)
	}
	bin := cairnBinary(t)
	cache := filepath.Join(t.TempDir(), "cache")
	for _, run := range []string{"cold", "warm"} {
		if err := runLimited(t, cg, bin, cache, "auto", run); err != nil {
			t.Fatalf("%s run under %d MiB: %v", run, cgroupLimit>>20, err)
		}
		t.Logf("%s run under %d MiB: done", run, cgroupLimit>>20)
	}
	// For the record, not a failure: the other engines on a cold cache.
	for _, engine := range []string{"compiler", "interpreter"} {
		if err := runLimited(t, cg, bin, filepath.Join(t.TempDir(), "cache"), engine, "cold"); err != nil {
			t.Logf("cold run with --engine %s under %d MiB: %v", engine, cgroupLimit>>20, firstLine(err.Error()))
		}
	}
}

// runLimited runs the example in cg with the engine and compile cache (a
// run that is cold or warm),
// logs its time, the process's peak resident memory and the cgroup's
// figures, and returns what kept it from finishing.
func runLimited(t *testing.T, cg *memoryCgroup, bin, cache, engine, run string) error {
	args := exampleAgent(t)
	args[len(args)-1] = cache
	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-10*time.Second))
	}
	defer cancel()
	cmd := cg.command(ctx, bin, append([]string{"run", "--engine", engine}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	peak := "?"
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = fmt.Sprintf("%.1f MiB", float64(ru.Maxrss)/1024)
	}
	t.Logf("%s, --engine %s: %s, the process's peak RSS %s; the cgroup: %s", run, engine,
		time.Since(start).Round(time.Millisecond), peak, cg.report())
	cg.resetPeak()
	if err != nil {
		return fmt.Errorf("%v\n%s", err, out.String())
	}
	return nil
}

// memoryCgroup is a cgroup with a memory limit that commands are started
// in: a directory of a cgroup v2 or v1 hierarchy, or systemd-run's scope.
type memoryCgroup struct {
	dir     string // "" for systemd-run
	v1      bool
	systemd string
}

// newMemoryCgroup makes a cgroup limited to cgroupLimit, removed when the
// test ends.
func newMemoryCgroup(t *testing.T) (*memoryCgroup, error) {
	name := fmt.Sprintf("cairn-test-%d", os.Getpid())
	limit := strconv.Itoa(cgroupLimit)
	var tried []error
	if own, err := ownCgroupV2(); err == nil {
		dir := filepath.Join("/sys/fs/cgroup", own, name)
		if err := makeCgroup(t, dir, map[string]string{"memory.max": limit, "memory.swap.max": "0"}); err == nil {
			return &memoryCgroup{dir: dir}, nil
		} else {
			tried = append(tried, err)
		}
	} else {
		tried = append(tried, err)
	}
	dir := filepath.Join("/sys/fs/cgroup/memory", name)
	if err := makeCgroup(t, dir, map[string]string{"memory.limit_in_bytes": limit}); err == nil {
		os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(limit), 0o644) // where swap is accounted
		return &memoryCgroup{dir: dir, v1: true}, nil
	} else {
		tried = append(tried, err)
	}
	if sd, err := exec.LookPath("systemd-run"); err == nil {
		if out, err := exec.Command(sd, "--user", "--scope", "-q", "-p", "MemoryMax="+limit, "true").CombinedOutput(); err == nil {
			return &memoryCgroup{systemd: sd}, nil
		} else {
			tried = append(tried, fmt.Errorf("systemd-run --user: %v: %s", err, bytes.TrimSpace(out)))
		}
	}
	return nil, errors.Join(tried...)
}

// ownCgroupV2 is this process's cgroup in a cgroup v2 hierarchy with the
// memory controller.
func ownCgroupV2() (string, error) {
	ctl, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
	if err != nil || !strings.Contains(string(ctl), "memory") {
		return "", fmt.Errorf("no cgroup v2 memory controller at /sys/fs/cgroup")
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(self), "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			return path, nil
		}
	}
	return "", fmt.Errorf("no cgroup v2 line in /proc/self/cgroup")
}

// makeCgroup makes the cgroup dir with the given settings, removed when the
// test ends.
func makeCgroup(t *testing.T, dir string, settings map[string]string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	t.Cleanup(func() { os.Remove(dir) })
	for file, value := range settings {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// command is bin with args, started inside the cgroup.
func (c *memoryCgroup) command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	if c.dir == "" {
		return exec.CommandContext(ctx, c.systemd, append([]string{"--user", "--scope", "-q",
			"-p", "MemoryMax=" + strconv.Itoa(cgroupLimit), "-p", "MemorySwapMax=0", bin}, args...)...)
	}
	procs := filepath.Join(c.dir, "cgroup.procs")
	return exec.CommandContext(ctx, "sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, procs, bin}, args...)...)
}

// report says what the cgroup saw: its peak and how often it hit the limit.
func (c *memoryCgroup) report() string {
	read := func(file string) string {
		b, err := os.ReadFile(filepath.Join(c.dir, file))
		if err != nil {
			return "?"
		}
		return strings.TrimSpace(string(b))
	}
	mib := func(s string) string {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return s
		}
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	switch {
	case c.dir == "":
		return "systemd scope (no figures)"
	case c.v1:
		return fmt.Sprintf("peak %s, limit hit %s times", mib(read("memory.max_usage_in_bytes")), read("memory.failcnt"))
	}
	return fmt.Sprintf("peak %s, events: %s", mib(read("memory.peak")), strings.ReplaceAll(read("memory.events"), "\n", ", "))
}

// resetPeak starts the cgroup's peak anew, where it can.
func (c *memoryCgroup) resetPeak() {
	if c.v1 {
		os.WriteFile(filepath.Join(c.dir, "memory.max_usage_in_bytes"), []byte("0"), 0o644)
		os.WriteFile(filepath.Join(c.dir, "memory.failcnt"), []byte("0"), 0o644)
	}
}

// longAgentRounds is how many rounds TestLongAgentUnderMemoryLimit runs:
// 100,000 messages, about 50 MiB of conversation held live.
const longAgentRounds = 50000

// An agent of 50,000 rounds runs to its end under 128 MiB. Its
// conversation, which the run holds, is about 50 MiB by then; without a
// soft memory limit the collector let the heap grow to twice that, and
// the cgroup killed the run at round 38,479. Under the same flag as
// TestExampleUnderMemoryLimit; a run takes one to three minutes.
//
//	CAIRN_CGROUP=1 go test ./cmd/cairn -run LongAgentUnderMemoryLimit -v -timeout 20m
func TestLongAgentUnderMemoryLimit(t *testing.T) {
	if os.Getenv("CAIRN_CGROUP") != "1" {
		t.Skip("set CAIRN_CGROUP=1 to run an agent of 50,000 rounds under a 128 MiB cgroup memory limit")
	}
	cg, err := newMemoryCgroup(t)
	if err != nil {
		t.Skipf("no cgroup to limit memory with: %v", err)
	}
	bin := cairnBinary(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "workspace", "f.txt"), []byte("a line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "turns:\n" + strings.Repeat("  - tool_calls: [{name: read_file, input: {path: f.txt}}]\n", longAgentRounds) + "  - text: done\n"
	agent := fmt.Sprintf(`name: long
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
limits: {max_rounds: %d}
`, longAgentRounds+10)
	for name, content := range map[string]string{"script.yaml": script, "agent.yaml": agent} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	cmd := cg.command(ctx, bin, "run", "--store", filepath.Join(dir, "store"), "--cache", cacheForTests(t),
		"-f", filepath.Join(dir, "agent.yaml"), "--id", "long", "--json", "go")
	var tail tailWriter
	cmd.Stdout, cmd.Stderr = &tail, &tail
	start := time.Now()
	err = cmd.Run()
	peak := "?"
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = fmt.Sprintf("%.1f MiB", float64(ru.Maxrss)/1024)
	}
	t.Logf("%d rounds under %d MiB: %s, the process's peak RSS %s; the cgroup: %s", longAgentRounds, cgroupLimit>>20,
		time.Since(start).Round(time.Millisecond), peak, cg.report())
	if err != nil {
		t.Fatalf("the run of %d rounds under %d MiB: %v; its output ended:\n%s", longAgentRounds, cgroupLimit>>20, err, tail.String())
	}
	end := tail.String()
	end = end[strings.LastIndex(end, `{"type":"run_end"`)+1:]
	if !strings.Contains(end, fmt.Sprintf(`"round":%d,`, longAgentRounds+1)) || !strings.Contains(end, `"status":"done"`) {
		t.Fatalf("the run did not end done after %d rounds; its output ended:\n%s", longAgentRounds+1, tail.String())
	}
}

// tailWriter keeps at least the last 4 KiB written to it.
type tailWriter struct{ b []byte }

func (w *tailWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > 8<<10 {
		w.b = append(w.b[:0], w.b[len(w.b)-4<<10:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string { return string(w.b) }
