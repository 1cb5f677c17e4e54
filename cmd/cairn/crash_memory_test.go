package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// memoryOp is one call of the memory agent's script: a remember (fact
// set), a forget (fact empty), a todo_write (todos set) or a spin.
type memoryOp struct {
	tool, key, fact string
	todos           []string
}

// memoryRounds are the memory agent's rounds, its calls in order. A
// round's calls run side by side, and their writes are made in the order
// of the calls when the round settles: round 3 writes one key twice and
// another it forgets in the same round.
var memoryRounds = [][]memoryOp{
	{{tool: "remember", key: "a", fact: "a of round 1"}, {tool: "remember", key: "shared", fact: "shared of round 1"},
		{tool: "todo_write", todos: []string{"read", "write"}}},
	{{tool: "remember", key: "b", fact: "b of round 2"}, {tool: "forget", key: "a"},
		{tool: "todo_write", todos: []string{"read", "write", "check"}}, {tool: "spin"}},
	{{tool: "remember", key: "shared", fact: "shared of round 3, first"}, {tool: "remember", key: "shared", fact: "shared of round 3, second"},
		{tool: "remember", key: "tmp", fact: "tmp of round 3"}, {tool: "forget", key: "tmp"}},
	{{tool: "remember", key: "c", fact: "c of round 4"}, {tool: "todo_write", todos: []string{"check"}}, {tool: "spin"}},
	{{tool: "forget", key: "b"}, {tool: "remember", key: "shared", fact: "shared of round 5"},
		{tool: "todo_write", todos: []string{"done"}}},
}

// memoryAgent is an agent with memory (namespace mem) and a task list
// that plays memoryRounds; each turn says keptNotes bytes of text, so that
// a commit compacts the journal.
func memoryAgent(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	hostileModule(t, bin, dir)
	var script strings.Builder
	script.WriteString("turns:\n")
	for _, ops := range memoryRounds {
		// One word, which the script says in one piece.
		fmt.Fprintf(&script, "  - text: %q\n    tool_calls:\n", strings.Repeat("a-note-", keptNotes/len("a-note-")))
		for _, op := range ops {
			var input any
			switch op.tool {
			case "remember":
				input = map[string]string{"key": op.key, "fact": op.fact}
			case "forget":
				input = map[string]string{"key": op.key}
			case "todo_write":
				var todos []map[string]string
				for _, c := range op.todos {
					todos = append(todos, map[string]string{"content": c, "status": "pending"})
				}
				input = map[string]any{"todos": todos}
			default:
				input = map[string]any{}
			}
			b, err := json.Marshal(input)
			must(t, err)
			fmt.Fprintf(&script, "      - {name: %s, input: %s}\n", op.tool, b)
		}
	}
	script.WriteString("  - text: finished\n")
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script.String()), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`
name: mem
model: {provider: script, script: script.yaml}
workspace: workspace
memory: mem
todos: true
tools:
  - {module: hostile.wasm, only: [spin], limits: {timeout: 150ms}}
`), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	return agent
}

// A real cairn process runs an agent that remembers and forgets facts and
// writes its task list, several calls a round, and is killed with SIGKILL
// at a random moment, while a round's spinning call runs and its memory
// calls have finished, or as soon as it reports a memory call started. After each trial's resume the agent is done,
// and: every call the killed run reported ended is kept, never run again
// and never sealed; every call in flight is sealed once, as having
// changed nothing, and its write is nowhere; the namespace holds each key
// once, with the fact of the last call that wrote it and was not sealed,
// as the call made it (agent, round, call); and the task list is the one
// of the last todo_write that was not sealed.
func TestKilledMemoryKeepsEachFactOnce(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	agent := memoryAgent(t, bin)
	cache := cacheForTests(t)
	full := warmRunTime(t, bin, func() ([]string, func()) {
		store := t.TempDir()
		return []string{"run", "--store", store, "--cache", cache, "--json", "--id", "victim", "-f", agent}, func() {
			checkMemory(t, bin, store, nil)
			compacted(t, store)
		}
	})
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	stats := map[string]int{}
	for trial := range soakTrials(t) {
		var name string
		var kill killFunc
		switch trial % 3 {
		case 0:
			delay := time.Duration(rng.Int63n(int64(full)))
			name = fmt.Sprintf("random-%s", delay.Round(time.Millisecond))
			kill = func(cmd *exec.Cmd, stdout *bufio.Reader, out *bytes.Buffer) { killAfter(cmd, stdout, out, delay) }
		case 2:
			r := rng.Intn(len(memoryRounds))
			i := rng.Intn(len(memoryRounds[r]))
			if memoryRounds[r][i].tool == "spin" {
				i--
			}
			call := fmt.Sprintf("call_%d_%d", r+1, i)
			name = "start-of-" + call
			kill = killAtCallStart(call, 0)
		default:
			round := []int{2, 4}[rng.Intn(2)]
			delay := time.Duration(rng.Int63n(int64(120 * time.Millisecond)))
			name = fmt.Sprintf("spin-round-%d+%s", round, delay.Round(time.Millisecond))
			kill = killAtCallStart(fmt.Sprintf("call_%d_%d", round, len(memoryRounds[round-1])-1), delay)
		}
		t.Run(name, func(t *testing.T) {
			store := t.TempDir()
			cmd := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "victim", "-f", agent)
			r, ok := killAndCheckResume(t, bin, store, cache, cmd, kill)
			if !ok {
				stats["before the agent was stored"]++
				return
			}
			for _, e := range r.after {
				for _, s := range e.Sealed {
					if s.Tool != "spin" && (s.Effects != "none" || !strings.HasPrefix(s.Recommendation, "retry")) {
						t.Errorf("sealed call %s of %s says effects %q, %q: its write is made only once its result is journaled", s.Call, s.Tool, s.Effects, s.Recommendation)
					}
				}
			}
			sealed := r.sealed
			if checkMemory(t, bin, store, sealed); t.Failed() {
				r.log(t)
			}
			stats[fmt.Sprintf("resumed at round %d", r.boundary)]++
			for id := range sealed {
				if r, i := callRound(id); memoryRounds[r-1][i].tool != "spin" {
					stats["with a sealed memory or todo call"]++
					break
				}
			}
		})
	}
	t.Logf("%d trials, an uninterrupted run taking %s: %v", soakTrials(t), full.Round(time.Millisecond), stats)
}

// checkMemory checks the namespace mem and the task list of agent victim
// against memoryRounds played in order, but for the sealed calls.
func checkMemory(t *testing.T, bin, store string, sealed map[string]bool) {
	t.Helper()
	type fact struct{ Text, Agent, Call string }
	want, wantTodos := map[string]fact{}, []string(nil)
	for r, ops := range memoryRounds {
		for i, op := range ops {
			id := fmt.Sprintf("call_%d_%d", r+1, i)
			if sealed[id] {
				continue
			}
			switch op.tool {
			case "remember":
				want[op.key] = fact{op.fact, "victim", id}
			case "forget":
				delete(want, op.key)
			case "todo_write":
				wantTodos = op.todos
			}
		}
	}
	out, err := exec.Command(bin, "memory", "ls", "--store", store, "--json", "mem").Output()
	if err != nil {
		t.Fatalf("cairn memory ls: %v\n%s", err, out)
	}
	got := map[string]fact{}
	for _, f := range jsonLines[struct{ Key, Text, Agent, Call string }](out) {
		if _, ok := got[f.Key]; ok {
			t.Errorf("key %s is listed twice:\n%s", f.Key, out)
		}
		got[f.Key] = fact{f.Text, f.Agent, f.Call}
	}
	if !maps.Equal(got, want) {
		t.Errorf("memory holds\n%v\nwant\n%v (sealed %v)", got, want, slices.Sorted(maps.Keys(sealed)))
	}
	show, err := exec.Command(bin, "show", "--store", store, "--json", "victim").Output()
	if err != nil {
		t.Fatalf("cairn show: %v\n%s", err, show)
	}
	var v struct{ Todos []struct{ Content string } }
	must(t, json.Unmarshal(show, &v))
	var todos []string
	for _, td := range v.Todos {
		todos = append(todos, td.Content)
	}
	if !slices.Equal(todos, wantTodos) {
		t.Errorf("the task list is %q, want %q (sealed %v)", todos, wantTodos, slices.Sorted(maps.Keys(sealed)))
	}
}
