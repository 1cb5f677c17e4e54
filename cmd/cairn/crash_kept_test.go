package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// keptRounds is how many rounds the kept-calls agent takes before its
// answer; the rounds in spinRounds also run a call that spins until its
// time limit, so that the round's other calls finish well before it.
const keptRounds = 6

var spinRounds = []int{2, 5}

// keptNotes is the size of the text of each of the kept-calls agent's turns.
const keptNotes = 20 << 10

// keptAgent is an agent whose every round appends a line, writes a file
// and reads one; in spinRounds a fourth call spins for 300 ms. Only spin
// has so short a time limit: on a busy machine another call could run
// past it and fail, and its change would rightly be missing. Each turn
// also says keptNotes bytes of text, so that the journal outgrows
// checkpoint.DefaultCompactAfter in round 4 and its commit compacts: a
// kill meets compaction, and a resume a journal that follows one.
func keptAgent(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	hostileModule(t, bin, dir)
	var script strings.Builder
	script.WriteString("turns:\n")
	for i := 1; i <= keptRounds; i++ {
		fmt.Fprintf(&script, "  - text: %q\n", strings.Repeat("a note ", keptNotes/len("a note ")))
		fmt.Fprintf(&script, "    tool_calls: [{name: append, input: {path: log.txt, line: line %d}}, {name: write_file, input: {path: copy-%d.txt, content: \"%d\"}}, {name: read_file, input: {path: log.txt}}", i, i, i)
		if slices.Contains(spinRounds, i) {
			script.WriteString(", {name: spin, input: {}}")
		}
		script.WriteString("]\n")
	}
	script.WriteString("  - text: finished\n")
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script.String()), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`
name: kept
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - {module: builtin, only: [write_file, read_file]}
  - {module: hostile.wasm, only: [append], grant: {workspace: rw}}
  - {module: hostile.wasm, only: [spin], limits: {timeout: 300ms}}
sandbox: {timeout: 60s}
`), 0o644))
	return agent
}

// soakTrials is how many trials TestKilledRoundKeepsFinishedCalls runs:
// CAIRN_SOAK=1000 for the soak, a few otherwise.
func soakTrials(t *testing.T) int {
	if s := os.Getenv("CAIRN_SOAK"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("CAIRN_SOAK=%q: want a number of trials", s)
		}
		return n
	}
	return 3
}

// keptEvent is what this test reads of a JSON event.
type keptEvent struct {
	Type  string `json:"type"`
	Round int    `json:"round"`
	Call  *struct {
		ID string `json:"id"`
	} `json:"call"`
	Status string `json:"status"`
	Sealed []struct {
		Call           string `json:"call"`
		Tool           string `json:"tool"`
		Effects        string `json:"effects"`
		Recommendation string `json:"recommendation"`
	} `json:"sealed"`
	Finished []string `json:"finished"`
	Applied  []string `json:"applied"`
	Text     string   `json:"text"`
}

// compacted fails t unless the agent in store has been compacted at least
// once (two snapshots): the trials need a compaction to meet.
func compacted(t *testing.T, store string) {
	t.Helper()
	if snaps, _ := filepath.Glob(filepath.Join(store, "agents", "*", "snap-*.cbor")); len(snaps) < 2 {
		t.Fatalf("the uninterrupted run left snapshots %v: the trials need a compaction to meet", snaps)
	}
}

// A real cairn process is killed with SIGKILL during a run whose rounds
// have several calls, half the trials at a random moment and half while
// a round's spinning call runs and its other calls have finished. After
// each trial's resume: every call whose tool_end the killed run printed is
// kept (or in a committed round), never started again, and its change is
// in the workspace exactly once; every call in flight is sealed once and
// its change is nowhere; no file is told as changed outside the agent.
func TestKilledRoundKeepsFinishedCalls(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	agent := keptAgent(t, bin)
	cache := cacheForTests(t)
	full := warmRunTime(t, bin, func() ([]string, func()) {
		ws := filepath.Join(t.TempDir(), "ws")
		must(t, os.Mkdir(ws, 0o755))
		store := t.TempDir()
		return []string{"run", "--store", store, "--cache", cache, "--json", "--workspace", ws, "-f", agent},
			func() { compacted(t, store) }
	})
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	stats := map[string]int{}
	for trial := range soakTrials(t) {
		var name string
		var kill killFunc
		if trial%2 == 0 {
			delay := time.Duration(rng.Int63n(int64(full)))
			name = fmt.Sprintf("random-%s", delay.Round(time.Millisecond))
			kill = func(cmd *exec.Cmd, stdout *bufio.Reader, out *bytes.Buffer) {
				killAfter(cmd, stdout, out, delay)
			}
		} else {
			round := spinRounds[rng.Intn(len(spinRounds))]
			delay := time.Duration(rng.Int63n(int64(250 * time.Millisecond)))
			name = fmt.Sprintf("spin-round-%d+%s", round, delay.Round(time.Millisecond))
			kill = killAtCallStart(fmt.Sprintf("call_%d_3", round), delay)
		}
		t.Run(name, func(t *testing.T) {
			killKeepResume(t, bin, agent, cache, kill, stats)
		})
	}
	t.Logf("%d trials: %v", soakTrials(t), stats)
}

// killAtCallStart kills the run once the call of that id has started and
// delay has passed.
func killAtCallStart(call string, delay time.Duration) killFunc {
	return func(cmd *exec.Cmd, stdout *bufio.Reader, out *bytes.Buffer) {
		readLinesUntil(stdout, out, func(line []byte) bool {
			var e keptEvent
			return json.Unmarshal(line, &e) == nil && e.Type == "tool_start" && e.Call.ID == call
		})
		killAfter(cmd, stdout, out, delay)
	}
}

// killKeepResume runs the agent, kills it (kill returns once the killed
// run's output is all in out), resumes it, and checks the resume.
func killKeepResume(t *testing.T, bin, agent, cache string, kill killFunc, stats map[string]int) {
	store := t.TempDir()
	ws := filepath.Join(t.TempDir(), "ws")
	must(t, os.Mkdir(ws, 0o755))
	cmd := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "victim", "--workspace", ws, "-f", agent)
	r, ok := killAndCheckResume(t, bin, store, cache, cmd, kill)
	if !ok {
		stats["before any call"]++
		return
	}
	for _, e := range r.after {
		if e.Type == "files_changed" {
			t.Errorf("resume told the model of an outside change: %s", e.Text)
		}
	}
	if checkKeptWorkspace(t, ws, keptRounds, r.sealed); t.Failed() {
		r.log(t)
	}
	stats[fmt.Sprintf("kept %d", len(r.kept))]++
	if len(r.sealed) > 0 {
		stats["with sealed calls"]++
	}
}

// killFunc kills a run: it returns once the killed run's output, read
// from stdout, is all in out.
type killFunc func(cmd *exec.Cmd, stdout *bufio.Reader, out *bytes.Buffer)

// killedResume is a trial's killed run and its resume.
type killedResume struct {
	killed, resumed []byte      // each run's JSON events
	after           []keptEvent // the resume's, read
	sealed, kept    map[string]bool
	boundary        int // the round the resume went on from
}

// log logs both runs' events, for a failed trial.
func (r killedResume) log(t *testing.T) {
	t.Logf("killed run:\n%s\nresume:\n%s", r.killed, r.resumed)
}

// killAndCheckResume starts cmd, a `cairn run --json` of agent victim in
// store, kills it, resumes the agent and checks what every resume
// promises: it goes on from the last committed round or later; every call
// that ended before the kill is kept (or in a committed round), never
// sealed and never started again, nor is any other call that started
// before it; no call is sealed twice; the resumed run ends done. ok is
// false, nothing checked, when the kill came before the run's first call
// and the resume found no agent to go on with.
func killAndCheckResume(t *testing.T, bin, store, cache string, cmd *exec.Cmd, kill killFunc) (r killedResume, ok bool) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var out bytes.Buffer
	kill(cmd, bufio.NewReader(stdout), &out)
	cmd.Wait()
	r.killed = out.Bytes()
	started, ended, committed := map[string]bool{}, map[string]bool{}, 0
	for _, e := range jsonLines[keptEvent](r.killed) {
		switch e.Type {
		case "tool_start":
			started[e.Call.ID] = true
		case "tool_end":
			ended[e.Call.ID] = true
		case "checkpoint_saved":
			committed = e.Round
		}
	}
	res := exec.Command(bin, "resume", "--store", store, "--cache", cache, "--json", "victim")
	r.resumed, err = res.Output()
	if code := res.ProcessState.ExitCode(); code == exitUsage && len(started) == 0 {
		return r, false // killed before the agent was stored, or before its first call
	} else if err != nil {
		t.Fatalf("resume: %v (exit %d)\n%s", err, code, r.resumed)
	}
	r.after = jsonLines[keptEvent](r.resumed)
	r.sealed, r.kept, r.boundary = map[string]bool{}, map[string]bool{}, committed
	for _, e := range r.after {
		switch e.Type {
		case "agent_resumed":
			if e.Round < committed {
				t.Errorf("resumed at round %d; round %d had been committed", e.Round, committed)
			}
			r.boundary = e.Round
			for _, s := range e.Sealed {
				if r.sealed[s.Call] {
					t.Errorf("call %s sealed twice", s.Call)
				}
				r.sealed[s.Call] = true
			}
			for _, f := range e.Finished {
				r.kept[f] = true
			}
		case "tool_start":
			if started[e.Call.ID] {
				t.Errorf("call %s had started before the kill and ran again", e.Call.ID)
			}
		}
	}
	for id := range ended {
		if round, _ := callRound(id); round > r.boundary && !r.kept[id] {
			t.Errorf("call %s ended before the kill, in round %d after the boundary %d, and was not kept", id, round, r.boundary)
		}
		if r.sealed[id] {
			t.Errorf("call %s ended before the kill and was sealed", id)
		}
	}
	if last := r.after[len(r.after)-1]; last.Type != "run_end" || last.Status != "done" {
		r.log(t)
		t.Fatalf("resumed run ended %+v", last)
	}
	return r, true
}

// callRound is the round and index of a call id of the script model
// ("call_<round>_<index>").
func callRound(id string) (round, index int) {
	parts := strings.Split(id, "_")
	if len(parts) == 3 {
		round, _ = strconv.Atoi(parts[1])
		index, _ = strconv.Atoi(parts[2])
	}
	return round, index
}

// checkKeptWorkspace checks that every round's append (call_<i>_0) and
// write (call_<i>_1) are in the workspace once, unless the call was
// sealed: then not at all.
func checkKeptWorkspace(t *testing.T, ws string, rounds int, sealed map[string]bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, "log.txt"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var want []string
	for i := 1; i <= rounds; i++ {
		if !sealed[fmt.Sprintf("call_%d_0", i)] {
			want = append(want, fmt.Sprintf("line %d", i))
		}
		copyPath := filepath.Join(ws, fmt.Sprintf("copy-%d.txt", i))
		got, err := os.ReadFile(copyPath)
		switch {
		case sealed[fmt.Sprintf("call_%d_1", i)] && err == nil:
			t.Errorf("copy-%d.txt exists, though its call was sealed", i)
		case !sealed[fmt.Sprintf("call_%d_1", i)] && string(got) != strconv.Itoa(i):
			t.Errorf("copy-%d.txt holds %q (%v), want %q", i, got, err, strconv.Itoa(i))
		}
	}
	wantLog := strings.Join(want, "\n")
	if len(want) > 0 {
		wantLog += "\n"
	}
	if string(b) != wantLog {
		t.Errorf("log.txt is\n%s\nwant\n%s(every finished append once, no sealed one)", b, wantLog)
	}
}
