package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ctxRounds is how many rounds the bounded-context agent takes before its
// answer; under its budget the conversation is cut every few rounds.
const ctxRounds = 24

// wireModel is an OpenAI-compatible model on loopback whose answer
// follows from the request alone, as a script's does, so that a run
// killed and resumed is asked what a run never killed is asked, and
// answers the same. A turn request gets a read_file call whose id counts
// the calls of the conversation (the last call the request shows, plus
// one), and "finished" after ctxRounds; a summary request (no tools) gets
// one line, the same for every request, so that a sealed call, whose
// result a summary request shows, leaves the summary as it was. It keeps every request's body
// by the first element of its path, so that each run of a test has its
// own list, and can hold a summary request until the process that sent it
// is killed.
type wireModel struct {
	*httptest.Server
	mu        sync.Mutex
	requests  map[string][][]byte
	holdAt    map[string]int // hold the n-th summary request of a path (1-based)
	summaries map[string]int
	held      chan string
}

func newWireModel(t *testing.T) *wireModel {
	m := &wireModel{requests: map[string][][]byte{}, holdAt: map[string]int{}, summaries: map[string]int{},
		held: make(chan string, 1)}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

var lastCallID = regexp.MustCompile(`"id":"call_(\d+)"`)

func (m *wireModel) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the process died while it sent the request
	}
	var req struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	path := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")[0]
	m.mu.Lock()
	m.requests[path] = append(m.requests[path], body)
	hold := false
	if len(req.Tools) == 0 {
		m.summaries[path]++
		hold = m.summaries[path] == m.holdAt[path]
	}
	m.mu.Unlock()
	if hold {
		m.held <- path
		<-r.Context().Done() // until the process is killed
		return
	}
	var delta, finish string
	if len(req.Tools) == 0 {
		delta, finish = `{"content":"The agent read the notes, step by step, and found nothing new in them."}`, "stop"
	} else {
		n := 1
		if ids := lastCallID.FindAllSubmatch(body, -1); len(ids) > 0 {
			k, _ := strconv.Atoi(string(ids[len(ids)-1][1]))
			n = k + 1
		}
		delta = fmt.Sprintf(`{"content":"step %d","tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"notes.txt\"}"}}]}`, n, n)
		finish = "tool_calls"
		if n > ctxRounds {
			delta, finish = `{"content":"finished"}`, "stop"
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%q}]}\n\n", delta, finish)
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":5,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", len(body)/4, len(body)/4+5)
}

// sent is what the runs under path sent, in order.
func (m *wireModel) sent(path string) [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests[path])
}

// holdSummary makes the server hold the n-th summary request under path.
func (m *wireModel) holdSummary(path string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.holdAt[path] = n
}

// contextCrashAgent writes an agent file whose model is m under path, with
// the context section given, and a workspace with the notes it reads.
func contextCrashAgent(t *testing.T, m *wireModel, path, section string) (agent, ws string) {
	t.Helper()
	dir := t.TempDir()
	ws = filepath.Join(dir, "ws")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(strings.Repeat("a line of the notes the agent reads again\n", 9)), 0o644))
	agent = filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(fmt.Sprintf(`name: ctx
model: {provider: openai, name: m, base_url: %s/%s/v1, max_retries: -1}
system: You read the notes again and again.
prompt: Read the notes, step by step.
workspace: ws
tools: [{module: builtin, only: [read_file]}]
limits: {max_rounds: %d}
context: %s
`, m.URL, path, ctxRounds+5, section)), 0o644))
	return agent, ws
}

// ctxEvent is what the context crash tests read of a JSON event.
type ctxEvent struct {
	Type   string `json:"type"`
	Round  int    `json:"round"`
	Status string `json:"status"`
	Sealed []struct {
		Call string `json:"call"`
	} `json:"sealed"`
}

// A real cairn process runs an agent under a context budget that cuts its
// conversation every few rounds, against a model on loopback that keeps
// every request it is sent, and is killed with SIGKILL at a random
// moment, while the model holds a summary request (summarize), just
// after the run reports a cut, whose record is then journaled and the
// round's request not yet answered, or while a call runs. After each trial's resume the agent
// is done; the requests the resumed run sent are the last ones a run never
// killed sends, byte for byte, from the first (the sealed calls' results
// aside, when the kill sealed any); and `cairn log --json` keeps every
// message, with each cut once, as the run never killed has them.
func TestKilledBoundedContextResumesTheSameRequests(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"summarize", "drop"} {
		t.Run(policy, func(t *testing.T) {
			killBoundedContext(t, policy, fmt.Sprintf("{budget: 1000, policy: %s, max_tool_result: 120}", policy))
		})
	}
}

func killBoundedContext(t *testing.T, policy, section string) {
	bin, cache := cairnBinary(t), cacheForTests(t)
	m := newWireModel(t)
	var full time.Duration
	var whole [][]byte
	var wholeLog []byte
	var cuts, summaries int
	for i := range 2 { // the second run, with the compile cache warm, sets the window
		path := fmt.Sprintf("whole%d", i)
		agent, ws := contextCrashAgent(t, m, path, section)
		store := t.TempDir()
		start := time.Now()
		out, err := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "victim", "--workspace", ws, "-f", agent).Output()
		if err != nil {
			t.Fatalf("uninterrupted run: %v\n%s", err, out)
		}
		full = time.Since(start)
		whole = m.sent(path)
		cuts = bytes.Count(out, []byte(`"type":"context_compacted"`))
		summaries = len(whole) - (ctxRounds + 1)
		wholeLog = agentLog(t, bin, store)
	}
	if cuts < 3 || (policy == "summarize") != (summaries > 0) {
		t.Fatalf("the uninterrupted run made %d cuts and %d summary requests: the trials need cuts to meet", cuts, summaries)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	stats := map[string]int{}
	for trial := range soakTrials(t) {
		path := fmt.Sprintf("trial%d", trial)
		agent, ws := contextCrashAgent(t, m, path, section)
		var name string
		var kill func(*exec.Cmd, *bufio.Reader, *bytes.Buffer)
		switch {
		case trial%4 == 3:
			n, delay := 1+rng.Intn(ctxRounds), time.Duration(rng.Int63n(int64(2*time.Millisecond)))
			name = fmt.Sprintf("call-%d+%s", n, delay)
			kill = func(cmd *exec.Cmd, stdout *bufio.Reader, out *bytes.Buffer) {
				readLinesUntil(stdout, out, func(line []byte) bool {
					return bytes.Contains(line, []byte(`"type":"tool_start"`)) && bytes.Contains(line, []byte(fmt.Sprintf(`"id":"call_%d"`, n)))
				})
				killAfter(cmd, stdout, out, delay)
			}
		case trial%4 == 1 && policy == "summarize":
			n := 1 + rng.Intn(summaries)
			name = fmt.Sprintf("summary-%d", n)
			m.holdSummary(path, n)
			kill = func(cmd *exec.Cmd, stdout *bufio.Reader, out *bytes.Buffer) {
				go func() { <-m.held; cmd.Process.Signal(syscall.SIGKILL) }()
				io.Copy(out, stdout)
			}
		case trial%4 != 0:
			n, delay := 1+rng.Intn(cuts), time.Duration(rng.Int63n(int64(5*time.Millisecond)))
			name = fmt.Sprintf("cut-%d+%s", n, delay)
			kill = func(cmd *exec.Cmd, stdout *bufio.Reader, out *bytes.Buffer) {
				seen := 0
				readLinesUntil(stdout, out, func(line []byte) bool {
					if bytes.Contains(line, []byte(`"type":"context_compacted"`)) {
						seen++
					}
					return seen == n
				})
				killAfter(cmd, stdout, out, delay)
			}
		default:
			delay := time.Duration(rng.Int63n(int64(full)))
			name = fmt.Sprintf("random-%s", delay.Round(time.Millisecond))
			kill = func(cmd *exec.Cmd, stdout *bufio.Reader, out *bytes.Buffer) {
				killAfter(cmd, stdout, out, delay)
			}
		}
		t.Run(name, func(t *testing.T) {
			store := t.TempDir()
			cmd := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "victim", "--workspace", ws, "-f", agent)
			stdout, err := cmd.StdoutPipe()
			must(t, err)
			must(t, cmd.Start())
			var out bytes.Buffer
			kill(cmd, bufio.NewReader(stdout), &out)
			cmd.Wait()
			killed := m.sent(path)
			res := exec.Command(bin, "resume", "--store", store, "--cache", cache, "--json", "victim")
			resOut, err := res.Output()
			code := res.ProcessState.ExitCode()
			if code == exitUsage && len(killed) == 0 {
				stats["before the agent was stored"]++
				return
			}
			if err != nil {
				t.Fatalf("resume: %v (exit %d)\n%s\nkilled run:\n%s", err, code, resOut, out.Bytes())
			}
			after := jsonLines[ctxEvent](resOut)
			sealed := map[string]bool{}
			for _, e := range after {
				for _, s := range e.Sealed {
					sealed[s.Call] = true
				}
			}
			if last := after[len(after)-1]; last.Type != "run_end" || last.Status != "done" {
				t.Fatalf("resumed run ended %+v\nresume:\n%s", last, resOut)
			}
			for i, b := range killed {
				if i >= len(whole) || !bytes.Equal(b, whole[i]) {
					t.Fatalf("request %d of the killed run is not the uninterrupted run's", i+1)
				}
			}
			resumed := m.sent(path)[len(killed):]
			skip := len(whole) - len(resumed)
			if skip < 0 || skip != len(killed) && skip != len(killed)-1 {
				t.Fatalf("the killed run sent %d requests and the resumed run %d; the uninterrupted run sent %d", len(killed), len(resumed), len(whole))
			}
			for i, b := range resumed {
				want := whole[skip+i]
				if len(sealed) > 0 {
					// A sealed result is not as long as the result it
					// stands for, so a cut after it may fall elsewhere:
					// the first request after resume is compared, unless
					// it cuts elsewhere, and no later one.
					b, want = maskSealed(t, b, sealed), maskSealed(t, want, sealed)
					if i > 0 || !bytes.Equal(b, want) && cutOf(t, b) != cutOf(t, want) {
						if !bytes.Equal(b, want) {
							stats["a sealed result moved a cut"]++
						}
						break
					}
				}
				if !bytes.Equal(b, want) {
					t.Fatalf("request %d after resume (%d of the uninterrupted run) differs (sealed %v):\nresumed: %s\nwant:    %s\nresume:\n%s",
						i+1, skip+i+1, sealed, b, want, resOut)
				}
			}
			got := agentLog(t, bin, store)
			checkCuts(t, got)
			if len(sealed) > 0 {
				got, wholeLog := maskSealedLog(t, got, sealed), maskSealedLog(t, wholeLog, sealed)
				if !bytes.Equal(got, wholeLog) {
					t.Fatalf("the messages of cairn log after resume:\n%s\nwant (sealed calls' results aside):\n%s", got, wholeLog)
				}
			} else if !bytes.Equal(got, wholeLog) {
				t.Fatalf("cairn log after resume:\n%s\nwant:\n%s", got, wholeLog)
			}
			if len(sealed) > 0 {
				stats["with a sealed call"]++
			}
			if skip == len(killed)-1 {
				stats["the killed run's last request sent again"]++
			} else {
				stats["the killed run's last request answered"]++
			}
		})
	}
	t.Logf("%d trials, an uninterrupted run taking %s: %v", soakTrials(t), full.Round(time.Millisecond), stats)
}

// agentLog is `cairn log --json victim`.
func agentLog(t *testing.T, bin, store string) []byte {
	t.Helper()
	out, err := exec.Command(bin, "log", "--store", store, "--json", "victim").Output()
	if err != nil {
		t.Fatalf("cairn log: %v\n%s", err, out)
	}
	return out
}

// maskSealed is an OpenAI request's body with the results of the sealed
// calls replaced by one text.
func maskSealed(t *testing.T, body []byte, sealed map[string]bool) []byte {
	t.Helper()
	var req map[string]any
	must(t, json.Unmarshal(body, &req))
	for _, msg := range req["messages"].([]any) {
		msg := msg.(map[string]any)
		if id, _ := msg["tool_call_id"].(string); sealed[id] {
			msg["content"] = "(sealed)"
		}
		for id := range sealed {
			// A summary request's transcript shows the result after the
			// turn that made the call.
			round := strings.TrimPrefix(id, "call_")
			text, _ := msg["content"].(string)
			msg["content"] = regexp.MustCompile(`(agent: step `+round+`\nagent calls read_file \S+\n)(?:result|error) of read_file: [\s\S]*?(\nagent: |$)`).
				ReplaceAllString(text, "${1}(sealed)${2}")
		}
	}
	b, err := json.Marshal(req)
	must(t, err)
	return b
}

// cutOf is where a request cuts the conversation: whether it is a turn
// request, the note at its head, and how many of the model's turns it
// shows or, a summary request, summarises.
func cutOf(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	must(t, json.Unmarshal(body, &req))
	note := ""
	for _, m := range req.Messages {
		if strings.HasPrefix(m.Content, "[cairn: ") {
			note = m.Content
		}
	}
	return fmt.Sprintf("turn %v, note %q, %d turns", len(req.Tools) > 0, note, bytes.Count(body, []byte("step ")))
}

// checkCuts checks that the cuts `cairn log --json` shows go forward,
// each once: a round's cut made in steps has steps that end further on,
// and no two cuts stand for one round.
func checkCuts(t *testing.T, log []byte) {
	t.Helper()
	type cut struct{ Round, From, Goal int }
	var last *cut
	for sc := bufio.NewScanner(bytes.NewReader(log)); sc.Scan(); {
		var l struct{ Compaction *cut }
		must(t, json.Unmarshal(sc.Bytes(), &l))
		c := l.Compaction
		if c == nil {
			continue
		}
		if last != nil && (c.From <= last.From || c.Round < last.Round || c.Round == last.Round && last.Goal == 0) {
			t.Errorf("cut %+v follows cut %+v: each cut stands once, and goes forward\n%s", *c, *last, log)
		}
		last = c
	}
}

// maskSealedLog is the messages of `cairn log --json` with the results of
// the sealed calls replaced by one text.
func maskSealedLog(t *testing.T, log []byte, sealed map[string]bool) []byte {
	t.Helper()
	var out bytes.Buffer
	for sc := bufio.NewScanner(bytes.NewReader(log)); sc.Scan(); {
		var msg map[string]any
		must(t, json.Unmarshal(sc.Bytes(), &msg))
		if msg["compaction"] != nil {
			continue // checkCuts checks them
		}
		if id, _ := msg["call_id"].(string); sealed[id] {
			msg["text"], msg["is_error"] = "(sealed)", nil
		}
		b, err := json.Marshal(msg)
		must(t, err)
		out.Write(append(b, '\n'))
	}
	return out.Bytes()
}

// Regression: a cut summarised in steps that a kill interrupted was
// finished by resume with steps that said the request held, before the
// cut, what it held after the steps already made: `cairn log` told a
// smaller cut than the one made. A real cairn process resumes with
// --upgrade an agent paused after some rounds with no context section,
// into an agent file that gives it a budget its conversation is far over:
// the first cut summarises in steps, each journaled. The process is
// killed while the model holds the second step's summary request, and
// resumed again. The requests the second resume sends are those a resume
// never killed sends from that request on, byte for byte (the cut is
// finished as planned, its first step not asked for again), and `cairn
// log --json`, every cut with its estimates, is that resume's.
func TestKilledSummaryInStepsRecordsTheCutItMade(t *testing.T) {
	t.Parallel()
	bin, cache := cairnBinary(t), cacheForTests(t)
	m := newWireModel(t)
	agent, ws := contextCrashAgent(t, m, "up", "null")
	plain, err := os.ReadFile(agent)
	must(t, err)
	first := bytes.Replace(plain, []byte("context: null\n"), nil, 1)
	must(t, os.WriteFile(agent, bytes.Replace(first, []byte(fmt.Sprintf("max_rounds: %d", ctxRounds+5)), []byte("max_rounds: 12"), 1), 0o644))
	paused := t.TempDir()
	if out, err := exec.Command(bin, "run", "--store", paused, "--cache", cache, "--id", "victim", "--workspace", ws, "-f", agent).CombinedOutput(); exitCodeOf(err) != exitPaused {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	must(t, os.WriteFile(agent, bytes.Replace(plain, []byte("context: null"), []byte("context: {budget: 1000, policy: summarize, max_tool_result: 120}"), 1), 0o644))
	copyStore := func() string {
		dir := filepath.Join(t.TempDir(), "store")
		if out, err := exec.Command("cp", "-a", paused, dir).CombinedOutput(); err != nil {
			t.Fatalf("copy the store: %v\n%s", err, out)
		}
		return dir
	}
	isSummary := func(b []byte) bool { return !bytes.Contains(b, []byte(`"tools":`)) }

	whole := copyStore()
	n0 := len(m.sent("up"))
	if out, err := exec.Command(bin, "resume", "--store", whole, "--cache", cache, "--upgrade", "victim").CombinedOutput(); err != nil {
		t.Fatalf("resume --upgrade: %v\n%s", err, out)
	}
	want := m.sent("up")[n0:]
	if len(want) < 2 || !isSummary(want[0]) || !isSummary(want[1]) {
		t.Fatalf("resume --upgrade did not summarise in steps: its first requests are summary requests: %v, %v", isSummary(want[0]), len(want) > 1 && isSummary(want[1]))
	}
	wantLog := agentLog(t, bin, whole)

	store := copyStore()
	m.mu.Lock()
	m.holdAt["up"] = m.summaries["up"] + 2
	m.mu.Unlock()
	n1 := len(m.sent("up"))
	killed := exec.Command(bin, "resume", "--store", store, "--cache", cache, "--upgrade", "victim")
	must(t, killed.Start())
	select {
	case <-m.held:
	case <-time.After(time.Minute):
		killed.Process.Kill()
		t.Fatal("the killed resume never sent its second summary request")
	}
	must(t, killed.Process.Signal(syscall.SIGKILL))
	killed.Wait()
	sent := m.sent("up")[n1:]
	if len(sent) != 2 || !bytes.Equal(sent[0], want[0]) || !bytes.Equal(sent[1], want[1]) {
		t.Fatalf("the killed resume sent %d requests, not the first two of the resume never killed", len(sent))
	}
	n2 := len(m.sent("up"))
	if out, err := exec.Command(bin, "resume", "--store", store, "--cache", cache, "victim").CombinedOutput(); err != nil {
		t.Fatalf("resume after the kill: %v\n%s", err, out)
	}
	got := m.sent("up")[n2:]
	if len(got) != len(want)-1 {
		t.Errorf("the resume after the kill sent %d requests; the resume never killed sent %d after its first", len(got), len(want)-1)
	}
	for i := range min(len(got), len(want)-1) {
		if !bytes.Equal(got[i], want[i+1]) {
			t.Fatalf("request %d after the kill differs from the resume never killed:\ngot:  %.800s\nwant: %.800s", i+1, got[i], want[i+1])
		}
	}
	if log := agentLog(t, bin, store); !bytes.Equal(log, wantLog) {
		t.Fatalf("cairn log after the kill:\n%s\nwant:\n%s", log, wantLog)
	}
}
