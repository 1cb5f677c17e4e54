package host

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
)

var contextRounds = flag.Int("context-rounds", 1000, "rounds of the bounded-context test (5000 for the long form)")

// recorder is a provider that checks and keeps what the model is sent.
type recorder struct {
	model.Provider
	t      testing.TB
	budget int

	mu        sync.Mutex
	turns     int   // turn requests seen
	largest   int   // the largest request's estimated tokens
	summaries int   // summary requests seen
	over      []int // estimated tokens of requests over the budget
	first     []byte
	failSum   error        // returned for summary requests while set
	onTurn    func([]byte) // sees each turn request's bytes
	bad       []string     // requests that part a call from its result
	usages    []int64      // the script's count of each turn request's input
	truncated int          // tool results shown cut
	headless  []string     // requests past a cut that do not open with the task and the note
	// miscounted are turns whose usage is not what the request sent.
	miscounted []string
	requests   map[int][]byte // turn request bytes by turn, for the turns asked for
	keep       map[int]bool
}

func (r *recorder) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	r.mu.Lock()
	n := model.EstimateRequest(req)
	if n > r.budget {
		r.over = append(r.over, n)
	}
	r.largest = max(r.largest, n)
	if req.Purpose == model.PurposeSummary {
		r.summaries++
		fail := r.failSum
		r.mu.Unlock()
		if fail != nil {
			return model.Response{}, fail
		}
		return r.Provider.Complete(ctx, req)
	}
	r.turns++
	if req.Earlier > 0 && (len(req.Messages) < 2 || req.Messages[0].Text != contextPrompt ||
		!strings.Contains(req.Messages[1].Text, "are left out of this request to keep it within its context budget")) {
		r.headless = append(r.headless, fmt.Sprintf("turn %d opens with %.100q", r.turns, req.Messages[0].Text))
	}
	if why := pairing(req.Messages); why != "" {
		r.bad = append(r.bad, why)
	}
	for _, m := range req.Messages {
		if m.Role == conversation.RoleTool && strings.Contains(m.Text, "[cairn: this result was cut") {
			r.truncated++
		}
	}
	b := requestBytes(r.t, req)
	if r.first == nil {
		r.first = b
	}
	if r.keep[r.turns] {
		r.requests[r.turns] = b
	}
	onTurn := r.onTurn
	r.mu.Unlock()
	if onTurn != nil {
		onTurn(b)
	}
	resp, err := r.Provider.Complete(ctx, req)
	r.mu.Lock()
	r.usages = append(r.usages, resp.Usage.InputTokens)
	if sent := wordsSent(req); err == nil && resp.Usage.InputTokens != int64(sent) {
		r.miscounted = append(r.miscounted, fmt.Sprintf("turn %d: the model counted %d tokens in, the request sent %d words", r.turns, resp.Usage.InputTokens, sent))
	}
	r.mu.Unlock()
	return resp, err
}

// wordsSent is what the script provider counts as a request's input: the
// words of the system prompt, of each tool's name, description and input
// schema, and of every message's text and call inputs.
func wordsSent(req model.Request) int {
	n := len(strings.Fields(req.System))
	for _, tl := range req.Tools {
		n += len(strings.Fields(tl.Name)) + len(strings.Fields(tl.Description)) + len(strings.Fields(string(tl.InputSchema)))
	}
	for _, m := range req.Messages {
		n += len(strings.Fields(m.Text))
		for _, c := range m.ToolCalls {
			n += len(strings.Fields(c.Input))
		}
	}
	return n
}

// requestBytes is a request as the test compares it: everything the
// provider is given but the text callback.
func requestBytes(t testing.TB, req model.Request) []byte {
	b, err := json.Marshal(struct {
		Model, System      string
		Messages           []conversation.Message
		Tools              []model.Tool
		MaxTokens, Earlier int
		Purpose            model.Purpose
	}{req.Model, req.System, req.Messages, req.Tools, req.MaxTokens, req.Earlier, req.Purpose})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pairing says how a conversation parts a call from its result, or "".
func pairing(msgs []conversation.Message) string {
	var open map[string]bool
	for i, m := range msgs {
		switch m.Role {
		case conversation.RoleTool:
			if !open[m.CallID] {
				return fmt.Sprintf("message %d answers call %s, which the message before it did not make", i, m.CallID)
			}
			delete(open, m.CallID)
		default:
			if len(open) > 0 {
				return fmt.Sprintf("message %d follows calls with no result", i)
			}
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		}
	}
	return ""
}

// contextAgent writes an agent of rounds rounds, each reading a file of
// about 300 bytes, one (the third) a file of 40 KB, under the context
// section given.
func contextAgent(t testing.TB, contextYAML string, rounds int) *AgentFile {
	t.Helper()
	var script strings.Builder
	script.WriteString("turns:\n")
	for i := 1; i <= rounds; i++ {
		file := "notes.txt"
		if i == 3 {
			file = "big.txt"
		}
		fmt.Fprintf(&script, "  - {text: step %d, tool_calls: [{name: read_file, input: {path: %s}}]}\n", i, file)
	}
	af := agentIn(t, fmt.Sprintf(`name: long
model: {provider: script, script: script.yaml}
system: You work through the notes one step at a time.
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
limits: {max_rounds: %d}
context: %s
`, rounds, contextYAML), script.String())
	ws := af.WorkspaceDir()
	notes := strings.Repeat("a line of the notes the agent reads again and again\n", 6)
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Repeat("a long file of many lines\n", 1600)), 0o644); err != nil {
		t.Fatal(err)
	}
	return af
}

// recordingEngine is an engine on store (a fresh file store if nil) whose
// runs' models are wrapped by rec.
func recordingEngine(t testing.TB, rec *recorder, store checkpoint.Store) (*Engine, checkpoint.Store) {
	t.Helper()
	if store == nil {
		var err error
		if store, err = OpenStore(t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	eng.wrapModel = func(p model.Provider) model.Provider { rec.Provider = p; return rec }
	return eng, store
}

const (
	budget        = 3000
	contextPrompt = "Read the notes, step by step."
)

var policies = map[string]string{
	"summarize": fmt.Sprintf("{budget: %d, policy: summarize, max_tool_result: 400}", budget),
	"drop":      fmt.Sprintf("{budget: %d, policy: drop, keep_turns: 12, max_tool_result: 400}", budget),
}

// An agent of many rounds with a context budget never sends the model a
// request over it, under either policy, never parts a call from its
// result, shows a long tool result cut with a note, and keeps every
// message in its journal, with each cut recorded.
func TestContextBudgetHoldsForThousandsOfRounds(t *testing.T) {
	for name, section := range policies {
		t.Run(name, func(t *testing.T) {
			rounds := *contextRounds
			rec := &recorder{t: t, budget: budget}
			// In memory: what is measured is the requests, not the disk
			// (the kill -9 test below runs on a file store).
			eng, store := recordingEngine(t, rec, checkpoint.NewMemStore())
			var cuts []Event
			res, err := eng.Run(context.Background(), RunOptions{Agent: contextAgent(t, section, rounds), ID: "long",
				Prompt: contextPrompt, OnEvent: func(e Event) {
					if e.Type == EventContextCompacted {
						cuts = append(cuts, e)
					}
				}})
			if err != nil || res.Rounds != rounds {
				t.Fatalf("run: %+v, %v", res, err)
			}
			checkRecorded(t, rec, rounds, name, true)
			st := readState(t, store, "long")
			checkJournal(t, st, rounds, len(cuts))
			if last := rec.usages[len(rec.usages)-1]; last > budget || last == 0 {
				t.Errorf("the script counted %d tokens in the last request: want what was sent, within %d", last, budget)
			}
			whole := model.EstimateRequest(model.Request{System: contextAgent(t, section, 1).System, Messages: st.Messages})
			t.Logf("%d rounds: %d turn and %d summary requests, %d cuts; the largest request %d tokens of %d; the whole conversation %d tokens; %d input tokens in all",
				rounds, rec.turns, rec.summaries, len(st.Compactions), rec.largest, budget, whole, st.Usage.InputTokens)
		})
	}
}

// checkRecorded checks what rec saw: turns turn requests, summaries only
// under the summarize policy, none over the budget or parting a call from
// its result, and, if cut is set, the long result shown cut.
func checkRecorded(t *testing.T, rec *recorder, turns int, policy string, cut bool) {
	t.Helper()
	if len(rec.over) > 0 {
		t.Errorf("%d requests over the budget of %d, e.g. %d tokens", len(rec.over), budget, rec.over[0])
	}
	if len(rec.headless) > 0 {
		t.Errorf("%d requests past a cut do not open with the task and the note: %s", len(rec.headless), rec.headless[0])
	}
	if len(rec.miscounted) > 0 {
		t.Errorf("%d turns' usage is not what was sent: %s", len(rec.miscounted), rec.miscounted[0])
	}
	if len(rec.bad) > 0 {
		t.Errorf("%d requests part a call from its result: %s", len(rec.bad), rec.bad[0])
	}
	if rec.turns != turns {
		t.Errorf("%d turn requests, want %d", rec.turns, turns)
	}
	if (policy == "summarize") != (rec.summaries > 0) {
		t.Errorf("policy %s made %d summary requests", policy, rec.summaries)
	}
	if cut && rec.truncated == 0 {
		t.Error("the 40 KB result was never shown cut")
	}
}

// checkJournal checks that the state keeps every message of the prompt
// and the rounds, and cuts of it that go forward.
func checkJournal(t *testing.T, st *checkpoint.State, rounds, cuts int) {
	t.Helper()
	if want := 1 + 2*rounds; len(st.Messages) != want {
		t.Errorf("the journal keeps %d messages, want %d", len(st.Messages), want)
	}
	if len(st.Compactions) == 0 || len(st.Compactions) != cuts {
		t.Fatalf("%d cuts journaled, %d context_compacted events", len(st.Compactions), cuts)
	}
	prev := 0
	for _, c := range st.Compactions {
		if c.From < prev || c.Pinned != 0 || c.After > budget || c.Goal != 0 {
			t.Fatalf("cut %+v after one at %d: want each further on, the prompt pinned, within the budget", c, prev)
		}
		prev = c.From
	}
}

func readState(t testing.TB, store checkpoint.Store, id string) *checkpoint.State {
	t.Helper()
	rec, err := store.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	return rec.State
}

// A summary the model fails to make stops the run with an error that says
// so and that nothing was cut; the journal keeps every message, and
// resume, with the model back, makes the cut and goes on.
func TestContextSummaryFailureLosesNothing(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		status Status
	}{
		{"unavailable", fmt.Errorf("%w: the server is down", model.ErrUnavailable), StatusPaused},
		{"refused", fmt.Errorf("%w: bad request", model.ErrRequest), StatusFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{t: t, budget: budget, failSum: c.err}
			eng, store := recordingEngine(t, rec, nil)
			res, err := eng.Run(context.Background(), RunOptions{Agent: contextAgent(t, policies["summarize"], 120),
				ID: "long", Prompt: contextPrompt})
			if err != nil || res.Status != c.status || !strings.Contains(res.Reason, "nothing was cut") ||
				!strings.Contains(res.Reason, "summarise messages 1 to") {
				t.Fatalf("run: %+v, %v; want %s with a reason that says nothing was cut", res, err, c.status)
			}
			st := readState(t, store, "long")
			if len(st.Compactions) != 0 || len(st.Messages) != 1+2*res.Rounds {
				t.Fatalf("after the failure: %d cuts, %d messages for %d rounds", len(st.Compactions), len(st.Messages), res.Rounds)
			}
			rec.mu.Lock()
			rec.failSum = nil
			rec.mu.Unlock()
			res, err = eng.Resume(context.Background(), ResumeOptions{ID: "long"})
			if err != nil || res.Status != StatusPaused || res.Rounds != 120 {
				t.Fatalf("resume: %+v, %v; want the 120 rounds taken", res, err)
			}
			if st := readState(t, store, "long"); len(st.Compactions) == 0 || len(st.Messages) != 241 {
				t.Errorf("after resume: %d cuts, %d messages", len(st.Compactions), len(st.Messages))
			}
			if len(rec.over) > 0 {
				t.Errorf("requests over the budget: %v", rec.over)
			}
		})
	}
}

// A budget the system prompt and tools leave no room in keeps the run
// from starting, before the model is asked or the agent stored, saying
// what to raise it to; here the agent file was changed in code after it
// was read, past ParseAgentFile's check.
func TestContextBudgetTooSmall(t *testing.T) {
	rec := &recorder{t: t, budget: 600}
	eng, store := recordingEngine(t, rec, nil)
	af := contextAgent(t, "{budget: 600}", 3)
	af.System = strings.Repeat("Be careful. ", 60)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "small", Prompt: "go"})
	if !errors.Is(err, ErrContextBudget) || !strings.Contains(err.Error(), "set context.budget to") || rec.turns != 0 {
		t.Fatalf("run: %+v, %v, %d requests; want ErrContextBudget before any request", res, err, rec.turns)
	}
	noAgentDir(t, store, "small")
}

func TestContextSpecValidate(t *testing.T) {
	for yaml, want := range map[string]string{
		"{policy: drop}":                        "budget is missing",
		"{budget: 100}":                         "below the least useful",
		"{budget: 8000, policy: forget}":        `policy "forget"`,
		"{budget: 8000, keep_turns: -1}":        "keep_turns cannot be negative",
		"{budget: 8000, max_tool_result: 5000}": "max_tool_result 5000",
		// Regression: a bound below its note's size sent more than the bound.
		"{budget: 8000, max_tool_result: 10}": "max_tool_result 10: want between",
	} {
		_, err := ParseAgentFile([]byte("name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\ncontext: "+yaml+"\n"), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("context %s: %v, want an error with %q", yaml, err, want)
		}
	}
}

func TestCutText(t *testing.T) {
	long := strings.Repeat("line of text\n", 1000) + strings.Repeat("é", 500)
	for _, limit := range []int{1, 7, 100, 2000, 5000} {
		got := cutText(long, limit)
		if model.EstimateTokens(got) > limit || !strings.HasPrefix(long, got) || !strings.HasSuffix(got, "\n") && len(got) < len(long) && len(got) > 60 {
			t.Errorf("cutText to %d: %d bytes, %d tokens", limit, len(got), model.EstimateTokens(got))
		}
	}
	cut := cutResult(long, 300, readers{readFile: true, grep: true})
	if model.EstimateTokens(cut) > 300 || !strings.Contains(cut, fmt.Sprintf("of its %d bytes are shown", len(long))) ||
		!strings.Contains(cut, "read_file takes offset and limit") {
		t.Errorf("cutResult: %d tokens: %q", model.EstimateTokens(cut), cut[len(cut)-300:])
	}
	if n := model.EstimateTokens(cutText(strings.Repeat("a ", 1000), 100)); n > 100 || n < 80 {
		t.Errorf("short words cut to %d tokens, want 80 to 100", n)
	}
	// Regression: a limit of zero or less looped forever.
	for _, limit := range []int{0, -136} {
		if got := cutText(long, limit); got != "" {
			t.Errorf("cutText to %d: %d bytes, want none", limit, len(got))
		}
	}
	// Regression: a bound below the full note's size sent more than the
	// bound; every bound an agent file may set is kept, note included.
	for _, limit := range []int{minToolResult, 40, 64, 100, 150} {
		if cut := cutResult(long, limit, readers{readFile: true, grep: true}); model.EstimateTokens(cut) > limit || !strings.Contains(cut, fmt.Sprintf("%d bytes", len(long))) {
			t.Errorf("cutResult to %d: %d tokens: %q", limit, model.EstimateTokens(cut), cut)
		}
	}
}

// threeRounds is a conversation of a prompt and three rounds, each a call
// of read_file and a result of about resultTokens estimated tokens.
func threeRounds(resultTokens int) *checkpoint.State {
	st := &checkpoint.State{Messages: []conversation.Message{{Role: conversation.RoleUser, Text: contextPrompt}}}
	for i := range 3 {
		id := fmt.Sprintf("c%d", i)
		st.Messages = append(st.Messages,
			conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: id, Name: "read_file", Input: `{"path":"a"}`}}},
			conversation.Message{Role: conversation.RoleTool, CallID: id, ToolName: "read_file", Text: strings.Repeat("abcd", resultTokens)})
	}
	return st
}

// Regression: when no tail fitted in half the budget, a cut kept the
// longest tail that fitted the whole budget, so the next round went over
// again and every round was cut (and, under summarize, summarised). It
// now keeps the shortest: the last round.
func TestCutKeepsTheShortestTailWhenHalfIsTooSmall(t *testing.T) {
	st := threeRounds(380) // a round of about 400 tokens: two fit in 1,000, none in half with a head
	w, err := newWindow(ContextSpec{Budget: 1000, Policy: PolicyDrop}, "", nil, st)
	if err != nil {
		t.Fatal(err)
	}
	if got, last := w.cutPoint(st, 0), len(st.Messages)-2; got != last {
		t.Fatalf("cut at message %d, want %d: the start of the last round", got, last)
	}
}

// Regression: a summary made under a larger budget, folded into the next
// under a budget lowered since (resume --upgrade), made transcript cut
// text to a negative length, which never ended; the summary so far is now
// cut to the summary's cap, and the transcript keeps within its room.
func TestTranscriptUnderALoweredBudget(t *testing.T) {
	st := threeRounds(100)
	w, err := newWindow(ContextSpec{Budget: 4000}, "", nil, st)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Repeat("a summary made under a budget of 40,000 ", 400) // about 4,000 tokens
	const room = 3500
	done := make(chan struct{})
	var text string
	var end int
	go func() {
		defer close(done)
		text, end = w.transcript(contextPrompt, old, len(st.Messages), room)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("transcript did not return within a minute")
	}
	if n := model.EstimateTokens(text); n > room || end <= w.from || !strings.Contains(text, "The summary so far") {
		t.Fatalf("transcript: %d tokens in a room of %d, rounds to %d", n, room, end)
	}
}

// A state whose last cut does not fit its conversation (a damaged store)
// is refused, not indexed.
func TestContextDamagedCutIsRefused(t *testing.T) {
	st := &checkpoint.State{Messages: make([]conversation.Message, 4),
		Compactions: []checkpoint.Compaction{{From: 9, Pinned: 0, Policy: "drop"}}}
	_, err := newWindow(ContextSpec{Budget: 8000}, "", nil, st)
	if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), "at message 9 (task at 0) of 4") {
		t.Fatalf("newWindow: %v", err)
	}
}
