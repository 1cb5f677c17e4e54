package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/syncpoint"
)

// roundsScript is a script of n rounds, round r writing f<r%3>.txt with
// "round r", then a text.
func roundsScript(n int) string {
	var b strings.Builder
	b.WriteString("turns:\n")
	for r := 1; r <= n; r++ {
		fmt.Fprintf(&b, "  - tool_calls: [{name: write_file, input: {path: f%d.txt, content: 'round %d'}}]\n", r%3, r)
	}
	b.WriteString("  - text: done\n")
	return b.String()
}

// wantWorkspaceAt checks that dir holds the workspace of round r of
// roundsScript's agent.
func wantWorkspaceAt(t *testing.T, dir string, r int) {
	t.Helper()
	for k := r - 2; k <= r; k++ {
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", k%3)))
		if err != nil || string(got) != fmt.Sprintf("round %d", k) {
			t.Fatalf("%s at round %d: f%d.txt holds %q (%v), want round %d", dir, r, k%3, got, err, k)
		}
	}
}

// gcRoundsAgent runs agent w of 25 rounds of roundsScript in a new store
// and returns the store and the agent file.
func gcRoundsAgent(t *testing.T) (store, agentFile string) {
	t.Helper()
	agentFile, store = scriptAgent(t, `name: w
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
`, roundsScript(25))
	if code, _, errOut := cairnProcess(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "w", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	return store, agentFile
}

// `cairn gc --keep-rounds N` trims an idle agent's event history and its
// pasts to its last N rounds (the run above has 26: 25 writes and an
// answer), which grow by every round: a dry run says what it would remove
// and changes nothing; the trim then keeps every round it keeps usable
// (fork, diff, log), refuses the older ones naming the round, gc and the
// oldest round that can be used, and the history starts with a warning
// that says what it lost. The agent runs on after it.
func TestGCKeepRoundsTrimsTheEventsAndPastsOfOldRounds(t *testing.T) {
	t.Parallel()
	store, agentFile := gcRoundsAgent(t)
	dir := filepath.Join(store, "agents", "w")
	size := func(name string) int64 {
		fi, err := os.Stat(filepath.Join(dir, name))
		must(t, err)
		return fi.Size()
	}
	events, past := size("events.jsonl"), size("past")

	code, out, errOut := cairnProcess(t, "gc", "--store", store, "--keep-rounds", "12", "--dry-run", "--json")
	if code != exitDone {
		t.Fatalf("gc --dry-run: exit %d %s", code, errOut)
	}
	var got struct {
		Bytes   int64 `json:"bytes"`
		Trimmed []struct {
			Path  string `json:"path"`
			Round int    `json:"round"`
			Bytes int64  `json:"bytes"`
		} `json:"trimmed"`
	}
	must(t, json.Unmarshal([]byte(out), &got))
	if len(got.Trimmed) != 2 || got.Trimmed[0].Path != filepath.Join("agents", "w", "past") || got.Trimmed[0].Round != 15 ||
		got.Trimmed[1].Path != filepath.Join("agents", "w", "events.jsonl") || got.Trimmed[1].Bytes <= events/2 || got.Bytes < got.Trimmed[1].Bytes {
		t.Fatalf("gc --dry-run --json: %s", out)
	}
	if size("events.jsonl") != events || size("past") != past {
		t.Fatal("a dry run trimmed")
	}

	code, out, errOut = cairnProcess(t, "gc", "--store", store, "--keep-rounds", "12")
	if code != exitDone || !strings.Contains(out, "removed the rounds before 15 from agents/w/past") ||
		!strings.Contains(out, "removed the rounds before 15 from agents/w/events.jsonl") {
		t.Fatalf("gc: exit %d %s%s", code, out, errOut)
	}
	if size("events.jsonl") >= events/2 || size("past") >= past {
		t.Fatalf("after gc: events %d bytes (were %d), past %d (were %d)", size("events.jsonl"), events, size("past"), past)
	}

	// The history starts where it now does, and says so.
	code, out, errOut = cairnProcess(t, "events", "--store", store, "--json", "w")
	if code != exitDone {
		t.Fatalf("events: exit %d %s", code, errOut)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for n := 0; sc.Scan(); n++ {
		var e struct {
			Type, Text, Run string
			Round           int
			Removed         int
		}
		must(t, json.Unmarshal(sc.Bytes(), &e))
		switch {
		case n == 0 && (e.Type != "warning" || e.Run != "" || e.Round != 15 || e.Removed == 0 ||
			!strings.Contains(e.Text, "`cairn gc --keep-rounds` removed the events of the rounds before round 15")):
			t.Fatalf("first line %s", sc.Text())
		case n > 0 && e.Round < 15:
			t.Fatalf("line %d is of round %d: %s", n+1, e.Round, sc.Text())
		}
	}
	code, out, errOut = cairnProcess(t, "events", "--store", store, "w")
	if code != exitDone || !strings.Contains(errOut, "removed the events of the rounds before round 15") || !strings.Contains(out, "round 15 done") {
		t.Fatalf("events: exit %d\n%s%s", code, out, errOut)
	}

	// Forks: a round removed is refused, naming it, gc and the oldest
	// round to fork at; the oldest kept and a later one have their
	// workspaces.
	code, _, errOut = cairnProcess(t, "fork", "--store", store, "--at-round", "10", "--as", "f10", "w")
	if code != exitUsage || !strings.Contains(errOut, "round 10") || !strings.Contains(errOut, "`cairn gc --keep-rounds` removed") ||
		!strings.Contains(errOut, "the oldest round to fork at is 14") {
		t.Fatalf("fork at a removed round: exit %d %s", code, errOut)
	}
	for _, r := range []int{14, 20} {
		ws := filepath.Join(t.TempDir(), "ws")
		if code, _, errOut := cairnProcess(t, "fork", "--store", store, "--at-round", fmt.Sprint(r), "--as", fmt.Sprintf("f%d", r), "--workspace", ws, "w"); code != exitDone {
			t.Fatalf("fork at round %d: exit %d %s", r, code, errOut)
		}
		wantWorkspaceAt(t, ws, r)
	}

	// Diffs from the store's pasts (this node keeps the changes of the
	// last 10 rounds that changed files: 16 to 25) and messages.
	code, _, errOut = cairnProcess(t, "diff", "--store", store, "--round", "14", "w")
	if code == exitDone || !strings.Contains(errOut, "round 14") || !strings.Contains(errOut, "`cairn gc --keep-rounds` removed its changes") ||
		!strings.Contains(errOut, "the oldest round whose changes and messages can be seen is 15") {
		t.Fatalf("diff of the oldest past kept: exit %d %s", code, errOut)
	}
	code, _, errOut = cairnProcess(t, "diff", "--store", store, "--round", "9", "w")
	if code == exitDone || !strings.Contains(errOut, "round 9") || !strings.Contains(errOut, "the oldest whose changes and messages can be seen is 15") {
		t.Fatalf("diff of a removed round: exit %d %s", code, errOut)
	}
	if code, out, errOut := cairnProcess(t, "diff", "--store", store, "--round", "15", "w"); code != exitDone || !strings.Contains(out, "+round 15") {
		t.Fatalf("diff of round 15: exit %d %s%s", code, out, errOut)
	}
	code, _, errOut = cairnProcess(t, "log", "--store", store, "--round", "14", "w")
	if code != exitUsage || !strings.Contains(errOut, "`cairn gc --keep-rounds` removed") || !strings.Contains(errOut, "is 15") {
		t.Fatalf("log of the oldest past kept: exit %d %s", code, errOut)
	}
	if code, out, errOut := cairnProcess(t, "log", "--store", store, "--round", "15", "w"); code != exitDone || !strings.Contains(out, "round 15") {
		t.Fatalf("log of round 15: exit %d %s%s", code, out, errOut)
	}

	// The agent runs on, its history and pasts go on from the trim, and
	// a second gc trims again.
	if code, _, errOut := cairnProcess(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "w", "-f", agentFile, "more"); code != exitDone {
		t.Fatalf("run after gc: exit %d: %s", code, errOut)
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if code, _, errOut := cairnProcess(t, "fork", "--store", store, "--at-round", "27", "--as", "f27", "--workspace", ws, "w"); code != exitDone {
		t.Fatalf("fork at the round after gc: exit %d %s", code, errOut)
	}
	wantWorkspaceAt(t, ws, 25)
	if code, out, errOut := cairnProcess(t, "gc", "--store", store, "--keep-rounds", "2"); code != exitDone || !strings.Contains(out, "before 26 from agents/w/events.jsonl") {
		t.Fatalf("second gc: exit %d %s%s", code, out, errOut)
	}
	if code, out, errOut := cairnProcess(t, "events", "--store", store, "w"); code != exitDone || !strings.Contains(errOut, "before round 26") ||
		strings.Contains(out, "round 25 done") || !strings.Contains(out, "round 27 done") {
		t.Fatalf("events after a second gc: exit %d\n%s%s", code, out, errOut)
	}
}

// gc leaves the rounds of an agent a process runs alone, as it leaves the
// rest of it, and keeps them all without --keep-rounds.
func TestGCKeepRoundsLeavesARunningAgentAndKeepsAllByDefault(t *testing.T) {
	t.Parallel()
	store, _ := gcRoundsAgent(t)
	events, err := os.ReadFile(filepath.Join(store, "agents", "w", "events.jsonl"))
	must(t, err)
	if code, out, errOut := cairnProcess(t, "gc", "--store", store); code != exitDone || strings.Contains(out, "rounds before") {
		t.Fatalf("gc: exit %d %s%s", code, out, errOut)
	}
	// Held as a run holds it (gc is another process).
	s, err := checkpoint.OpenFileStore(store)
	must(t, err)
	lock, err := s.Lock("w", checkpoint.ThisProcess("test"))
	must(t, err)
	defer lock.Unlock()
	if code, out, errOut := cairnProcess(t, "gc", "--store", store, "--keep-rounds", "1"); code != exitDone ||
		!strings.Contains(out, "skipped agent w: a process runs it") || strings.Contains(out, "rounds before") {
		t.Fatalf("gc of a running agent: exit %d %s%s", code, out, errOut)
	}
	if now, _ := os.ReadFile(filepath.Join(store, "agents", "w", "events.jsonl")); string(now) != string(events) {
		t.Fatal("gc trimmed the history of an agent a process runs")
	}
}

// `--keep-rounds` is refused when negative.
func TestGCKeepRoundsIsRefusedWhenNegative(t *testing.T) {
	t.Parallel()
	code, _, errOut := cairnProcess(t, "gc", "--store", t.TempDir(), "--keep-rounds", "-1")
	if code != exitUsage || !strings.Contains(errOut, "--keep-rounds cannot be negative") {
		t.Fatalf("exit %d %s", code, errOut)
	}
}

// A trim that fails (here: the history's temp file taken away before its
// rename, as a failed write leaves none) is named on stderr, with what to
// do, and gc exits 1; the history is as it was, and the rest of the store
// was collected.
func TestGCKeepRoundsThatCannotTrimSaysSoAndCollectsTheRest(t *testing.T) {
	store, _ := gcRoundsAgent(t)
	dir := filepath.Join(store, "agents", "w")
	events, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	must(t, err)
	stop := syncpoint.Observe(func(p string) {
		if filepath.Dir(p) == dir && strings.HasPrefix(filepath.Base(p), "events.jsonl.") {
			os.Remove(p)
		}
	})
	code, out, errOut := cairn(t, "gc", "--store", store, "--keep-rounds", "3")
	stop()
	if code != exitFailed || !strings.Contains(errOut, "could not trim the old rounds of agent w") ||
		!strings.Contains(errOut, "make room for it") || !strings.Contains(out, "removed the rounds before 24 from agents/w/past") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "events.jsonl")); string(now) != string(events) {
		t.Fatal("the history is not as it was")
	}
}

// Undo and a diff of the last change, on a node that did not run the
// agent (it keeps no changes of it), read the store's pasts for the last
// round that changed files; when gc removed that round's past, they say
// so, naming the oldest round whose changes can be seen, where they said
// that none of the last rounds changed a file.
func TestUndoOfAnAgentWhosePastsGCTrimmedSaysSo(t *testing.T) {
	t.Parallel()
	store, agentFile := gcRoundsAgent(t)
	for _, prompt := range []string{"more", "again"} { // rounds 27 and 28 change nothing
		if code, _, errOut := cairnProcess(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "w", "-f", agentFile, prompt); code != exitDone {
			t.Fatalf("run: exit %d: %s", code, errOut)
		}
	}
	if code, out, errOut := cairnProcess(t, "gc", "--store", store, "--keep-rounds", "2"); code != exitDone {
		t.Fatalf("gc: exit %d %s%s", code, out, errOut)
	}
	must(t, os.RemoveAll(filepath.Join(store, "agents", "w", "changes"))) // as on another node
	for _, args := range [][]string{{"undo", "--store", store, "w"}, {"diff", "--store", store, "w"}} {
		code, _, errOut := cairnProcess(t, args...)
		if code == exitDone || !strings.Contains(errOut, "`cairn gc --keep-rounds` kept: it removed those of the rounds before 26") ||
			!strings.Contains(errOut, "the oldest round whose changes can be seen is 27") {
			t.Fatalf("%s: exit %d %s", args[0], code, errOut)
		}
	}
}
