package host

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// writerAgent has tools that write (append, write_file), one that reads
// (read_file) and one that never ends (spin).
const writerAgent = `
name: writer
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - {module: builtin, only: [write_file, read_file]}
  - {module: hostile.wasm, only: [append, spin], grant: {workspace: rw}}
sandbox: {timeout: 30s, memory: 64MiB}
`

// writerFile is the writer agent with script, its hostile module beside it.
func writerFile(t *testing.T, script string) *AgentFile {
	t.Helper()
	af := agentIn(t, writerAgent, script)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	return af
}

// watchedStore is a file store whose logs tell which records are durable
// (appended, then synced) and can stop as a process stops: at the first
// Commit cut matches, every call to the log fails from then on, and what
// was appended stays in the journal, unsynced, as kill -9 leaves it.
type watchedStore struct {
	*checkpoint.FileStore
	cut func(checkpoint.Record) bool

	mu      sync.Mutex
	durable []checkpoint.Record   // records synced, in order
	unsaved []checkpoint.Record   // records appended since the last sync
	writes  [][]checkpoint.Record // the records of each Append and Commit
	history [][]byte              // each write to the agents' histories
}

// Events is the agent's history, each write to which is kept in
// s.history.
func (s *watchedStore) Events(id string) (io.WriteCloser, error) {
	w, err := s.FileStore.Events(id)
	if err != nil {
		return nil, err
	}
	return &watchedHistory{WriteCloser: w, s: s}, nil
}

type watchedHistory struct {
	io.WriteCloser
	s *watchedStore
}

func (h *watchedHistory) Write(p []byte) (int, error) {
	h.s.mu.Lock()
	h.s.history = append(h.s.history, slices.Clone(p))
	h.s.mu.Unlock()
	return h.WriteCloser.Write(p)
}

var errCut = errors.New("the process stopped here")

func (s *watchedStore) Open(id string) (*checkpoint.Recovered, checkpoint.Log, error) {
	rec, log, err := s.FileStore.Open(id)
	if err != nil {
		return nil, nil, err
	}
	return rec, &watchedLog{Log: log, s: s}, nil
}

func (s *watchedStore) Create(id string, st *checkpoint.State) (checkpoint.Log, error) {
	log, err := s.FileStore.Create(id, st)
	if err != nil {
		return nil, err
	}
	return &watchedLog{Log: log, s: s}, nil
}

// isDurable reports whether a record that match matches was synced.
func (s *watchedStore) isDurable(match func(checkpoint.Record) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.durable, match)
}

type watchedLog struct {
	checkpoint.Log
	s    *watchedStore
	dead bool
}

func (l *watchedLog) Append(recs ...checkpoint.Record) error {
	if l.dead {
		return errCut
	}
	l.s.mu.Lock()
	l.s.unsaved = append(l.s.unsaved, recs...)
	l.s.writes = append(l.s.writes, recs)
	l.s.mu.Unlock()
	return l.Log.Append(recs...)
}

func (l *watchedLog) Sync() error {
	if l.dead {
		return errCut
	}
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	err := l.Log.Sync()
	if err == nil {
		l.s.durable, l.s.unsaved = append(l.s.durable, l.s.unsaved...), nil
	}
	return err
}

func (l *watchedLog) Commit(recs ...checkpoint.Record) (int64, error) {
	if l.dead || l.s.cut != nil && len(recs) > 0 && l.s.cut(recs[len(recs)-1]) {
		l.dead = true
		return 0, errCut
	}
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.writes = append(l.s.writes, recs)
	n, err := l.Log.Commit(recs...)
	if err == nil {
		l.s.durable, l.s.unsaved = append(append(l.s.durable, l.s.unsaved...), recs...), nil
	}
	return n, err
}

func (l *watchedLog) Close() error { return l.Log.Close() }

// watchedEngine is an engine on a watched store in dir.
func watchedEngine(t *testing.T, dir string, cut func(checkpoint.Record) bool) (*Engine, *watchedStore) {
	t.Helper()
	fs, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	store := &watchedStore{FileStore: fs, cut: cut}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	return eng, store
}

func isRecord(typ checkpoint.RecordType, call string, phase checkpoint.Phase) func(checkpoint.Record) bool {
	return func(r checkpoint.Record) bool {
		return r.Type == typ && r.Call == call && (phase == "" || r.Phase == phase)
	}
}

// A call is journaled as executing, durably, before its tool runs, and
// its result is durable before its tool_end is told — for each call of a
// round, not only once the round's last call returns.
func TestCallRecordsAreDurableBeforeTheirEvents(t *testing.T) {
	af := writerFile(t, `
turns:
  - tool_calls: [{name: append, input: {path: log.txt, line: one}}, {name: read_file, input: {path: log.txt}}, {name: write_file, input: {path: b.txt, content: bee}}]
  - tool_calls: [{name: append, input: {path: log.txt, line: two}}]
  - text: done
`)
	eng, store := watchedEngine(t, t.TempDir(), nil)
	var failures []string
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go", OnEvent: func(e Event) {
		switch e.Type {
		case EventToolStart:
			if !store.isDurable(isRecord(checkpoint.RecPhase, e.Call.ID, checkpoint.PhaseExecuting)) {
				failures = append(failures, e.Call.ID+" started before its executing record was durable")
			}
		case EventToolEnd:
			if !store.isDurable(isRecord(checkpoint.RecResult, e.Call.ID, "")) {
				failures = append(failures, e.Call.ID+" ended before its result was durable")
			}
		}
	}})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if len(failures) > 0 {
		t.Fatal(strings.Join(failures, "\n"))
	}
	if b, _ := os.ReadFile(filepath.Join(af.Dir, "workspace", "log.txt")); string(b) != "one\ntwo\n" {
		t.Fatalf("log.txt = %q", b)
	}
}

// Regression: a call that finished while another call of its round still
// ran was sealed on resume and the model told to retry it, and its changes
// were thrown away, because results reached the journal only when every
// call of the round had returned. Now it is kept: never run again, its
// changes applied once; only the call in flight is sealed.
func TestFinishedCallOfInterruptedRoundIsKept(t *testing.T) {
	af := writerFile(t, `
turns:
  - tool_calls: [{name: append, input: {path: log.txt, line: one}}, {name: spin, input: {}}]
  - text: done
`)
	dir := t.TempDir()
	eng, store := watchedEngine(t, dir, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The append's tool_end waits for the round's settlement, which
		// spin holds up; its result is durable as it finishes.
		for !store.isDurable(isRecord(checkpoint.RecResult, "call_1_0", "")) {
			time.Sleep(time.Millisecond)
		}
		cancel() // as SIGTERM does, while spin runs
	}()
	var ended []string
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "a", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventToolEnd {
			ended = append(ended, e.Call.ID)
		}
	}})
	if err != nil || res.Status != StatusPaused || res.Rounds != 0 {
		t.Fatalf("run: %+v, %v", res, err)
	}
	// Regression: the append, journaled as it finished and waiting for the
	// round's settlement, had no tool_end when the stop came.
	if !slices.Equal(ended, []string{"call_1_0"}) {
		t.Fatalf("tool_end of the stopped run: %v, want the finished call's", ended)
	}
	res, events := resume(t, eng, "a", StrategySeal)
	if res.Status != StatusDone || res.Rounds != 2 {
		t.Fatalf("resume: %+v", res)
	}
	// What resume applied is told after agent_resumed, which says what it
	// is (regression: it came first).
	resumedAt := slices.IndexFunc(events, func(e Event) bool { return e.Type == EventAgentResumed })
	appliedAt := slices.IndexFunc(events, func(e Event) bool { return e.Type == EventEffectsApplied })
	if resumedAt < 0 || appliedAt < resumedAt {
		var types []EventType
		for _, e := range events {
			types = append(types, e.Type)
		}
		t.Fatalf("agent_resumed at %d, effects_applied at %d: %v", resumedAt, appliedAt, types)
	}
	ar := eventOf(events, EventAgentResumed)
	if ar == nil || !slices.Equal(ar.Finished, []string{"call_1_0"}) || !slices.Equal(ar.Applied, []string{"call_1_0"}) ||
		len(ar.Sealed) != 1 || ar.Sealed[0].Call != "call_1_1" || ar.Sealed[0].Phase != checkpoint.PhaseExecuting {
		t.Fatalf("agent_resumed %+v", ar)
	}
	for _, e := range events {
		if e.Type == EventToolStart {
			t.Errorf("resume started %s again", e.Call.ID)
		}
		if e.Type == EventFilesChanged {
			t.Errorf("resume told the model of an outside change: %s", e.Text)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(af.Dir, "workspace", "log.txt")); string(b) != "one\n" {
		t.Fatalf("log.txt = %q, want the kept call's line once", b)
	}
	msgs := toolMessages(t, eng.Store(), "a")
	if m, ok := msgs["call_1_0"]; !ok || m.IsError || m.Text != "appended" {
		t.Fatalf("the model reads %+v for the kept call", m)
	}
	if m := msgs["call_1_1"]; !m.IsError || !strings.Contains(m.Text, "interrupted") {
		t.Fatalf("the model reads %+v for the sealed call", m)
	}
}

// Regression: a process that died after a round's changes were applied
// and before the round was committed left resume telling the model that
// its own write was "modified outside the agent". The apply's record names
// what it wrote, so resume knows; a real outside edit in that window is
// still told.
func TestOwnApplyIsNotOutsideChange(t *testing.T) {
	for _, outside := range []bool{false, true} {
		name := map[bool]string{false: "own-write", true: "outside-edit"}[outside]
		t.Run(name, func(t *testing.T) {
			af := writerFile(t, `
turns:
  - tool_calls: [{name: write_file, input: {path: out.txt, content: mine}}]
  - tool_calls: [{name: read_file, input: {path: out.txt}}]
  - text: done
`)
			dir := t.TempDir()
			eng, _ := watchedEngine(t, dir, func(r checkpoint.Record) bool { return r.Type == checkpoint.RecCommit && r.Round == 1 })
			if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go"}); err == nil {
				t.Fatal("the run went on past the cut")
			}
			out := filepath.Join(af.Dir, "workspace", "out.txt")
			if b, _ := os.ReadFile(out); string(b) != "mine" {
				t.Fatalf("before the cut the apply left %q", b)
			}
			if outside {
				if err := os.WriteFile(out, []byte("theirs"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			eng2, _ := watchedEngine(t, dir, nil)
			res, events := resume(t, eng2, "a", StrategySeal)
			if res.Status != StatusDone {
				t.Fatalf("resume: %+v", res)
			}
			ar := eventOf(events, EventAgentResumed)
			if ar == nil || !slices.Equal(ar.Finished, []string{"call_1_0"}) || len(ar.Applied) != 0 || len(ar.Sealed) != 0 {
				t.Fatalf("agent_resumed %+v", ar)
			}
			note := eventOf(events, EventFilesChanged)
			switch {
			case !outside && note != nil:
				t.Fatalf("cairn's own write told as an outside change: %s", note.Text)
			case outside && (note == nil || !strings.Contains(note.Text, "out.txt")):
				t.Fatalf("the outside edit was not told: %+v", note)
			}
			want := map[bool]string{false: "mine", true: "theirs"}[outside]
			if b, _ := os.ReadFile(out); string(b) != want {
				t.Fatalf("out.txt = %q, want %q", b, want)
			}
		})
	}
}

// --strategy replay drops a round that changed nothing: it reports its
// calls as dropped (not sealed, not kept) and counts the dropped turn's
// tokens.
func TestReplayReportsDroppedCallsAndCountsTheirTokens(t *testing.T) {
	spent := conversation.Usage{InputTokens: 1000, OutputTokens: 100}
	eng, store, id := afterRound1(t, resumeScript, "crashed", func(log checkpoint.Log) error {
		turn := conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{
			{ID: "call_2_0", Name: "echo", Input: `{"text":"two","n":2}`},
			{ID: "call_2_1", Name: "echo", Input: `{"text":"three","n":3}`}}}
		return log.Append(
			checkpoint.Record{Type: checkpoint.RecRunStarted, Run: &checkpoint.RunInfo{ID: "run-crashed"}},
			checkpoint.Record{Type: checkpoint.RecTurn, Round: 2, Message: &turn, Usage: &spent},
			checkpoint.Record{Type: checkpoint.RecPhase, Round: 2, Call: "call_2_0", Tool: "echo", Phase: checkpoint.PhaseExecuting},
			checkpoint.Record{Type: checkpoint.RecPhase, Round: 2, Call: "call_2_1", Tool: "echo", Phase: checkpoint.PhaseExecuting},
			checkpoint.Record{Type: checkpoint.RecResult, Round: 2, Call: "call_2_1", Tool: "echo",
				Result: &checkpoint.Result{Output: "three x3", Unsettled: true}})
	})
	before, err := store.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	res, events := resume(t, eng, id, StrategyReplay)
	ar := eventOf(events, EventAgentResumed)
	if ar == nil || !slices.Equal(ar.Dropped, []string{"call_2_0", "call_2_1"}) || len(ar.Sealed)+len(ar.Finished)+len(ar.Awaiting) != 0 {
		t.Fatalf("agent_resumed %+v", ar)
	}
	// What the replayed rounds cost, beside the dropped turn.
	var replayed conversation.Usage
	for _, e := range events {
		if e.Type == EventModelTurn {
			replayed = replayed.Add(*e.Usage)
		}
	}
	if want := before.State.Usage.Add(spent).Add(replayed); res.Usage != want {
		t.Fatalf("usage after replay %+v, want %+v (the dropped turn counted)", res.Usage, want)
	}
}

// toolMessages are the tool messages of an agent's state, by call.
func toolMessages(t *testing.T, store checkpoint.Store, agent string) map[string]conversation.Message {
	t.Helper()
	rec, err := store.Read(agent)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]conversation.Message{}
	for _, m := range rec.State.Messages {
		if m.CallID != "" {
			out[m.CallID] = m
		}
	}
	return out
}
