package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// noteModel is an OpenAI-compatible model on loopback that reads
// notes.txt when the request ends with a person's or cairn's message and
// answers "done" when it ends with a tool's result. It keeps every
// request's body, and holds the next request after hold is called until
// the process that sent it dies.
type noteModel struct {
	*httptest.Server
	mu       sync.Mutex
	requests [][]byte
	holdNext bool
	held     chan []byte
}

func newNoteModel(t *testing.T) *noteModel {
	m := &noteModel{held: make(chan []byte, 1)}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		m.mu.Lock()
		m.requests = append(m.requests, body)
		hold := m.holdNext
		m.holdNext = false
		n := len(m.requests)
		m.mu.Unlock()
		if hold {
			m.held <- body
			<-r.Context().Done() // until the process is killed
			return
		}
		delta := fmt.Sprintf(`{"tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"notes.txt\"}"}}]}`, n)
		finish := "tool_calls"
		if bytes.Contains(body[bytes.LastIndex(body, []byte(`"role":`)):], []byte(`"role":"tool"`)) {
			delta, finish = `{"content":"done"}`, "stop"
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%q}]}\n\ndata: [DONE]\n\n", delta, finish)
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *noteModel) hold() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.holdNext = true
}

func (m *noteModel) sent() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]byte(nil), m.requests...)
}

// Regression: a round that opens with a person's prompt and then cairn's
// note of files changed outside the agent while it was stopped (a new
// prompt to an agent whose file someone edited) was resumed after kill -9
// with only the last of its two messages: the request after resume left
// out the prompt, so the model was asked to go on without its task, and
// resume --strategy replay gave the note again as the task's prompt. A
// real cairn process is killed while the model holds the first request of
// such a round. The request the resumed run sends holds the killed run's
// messages, the prompt among them, in order (seal keeps the round's
// note, and the resume, which finds the file changed again, adds its own),
// the very request under replay; and the journal keeps the prompt once.
func TestKilledRoundKeepsItsPromptBeforeANote(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"seal", "replay"} {
		t.Run(strategy, func(t *testing.T) {
			held, resumed := killPromptAndNote(t, strategy)
			killed, got := requestMessages(t, held), requestMessages(t, resumed)
			if strategy == "replay" && !bytes.Equal(resumed, held) || len(got) < len(killed) || !slices.Equal(got[:len(killed)], killed) {
				t.Fatalf("the first request after resume does not send what the killed run sent:\nkilled:  %q\nresumed: %q", killed, got)
			}
		})
	}
}

// Regression: after the same kill, resume (seal) told the model of the
// changed file a second time: the note the killed run journaled stood,
// and the resume made another, since which files the note told of was
// known only to the killed process, not to the journal. The request the
// resumed run sends is the one the killed run sent, byte for byte.
func TestKilledRoundTellsOfAChangedFileOnce(t *testing.T) {
	held, resumed := killPromptAndNote(t, "seal")
	if !bytes.Equal(resumed, held) {
		t.Fatalf("the first request after resume is not the one the killed run sent:\nkilled:  %q\nresumed: %q",
			requestMessages(t, held), requestMessages(t, resumed))
	}
}

// killPromptAndNote runs an agent once, changes the file it read, gives it
// a new prompt and kills the run with SIGKILL while the model holds the
// round's request, resumes it with strategy, and returns the request the
// killed run sent and the first the resumed run sent. It checks that the
// journal keeps the new prompt once.
func killPromptAndNote(t *testing.T, strategy string) (held, resumed []byte) {
	bin, cache := cairnBinary(t), cacheForTests(t)
	m := newNoteModel(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("the first notes\n"), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(fmt.Sprintf(`name: pn
model: {provider: openai, name: m, base_url: %s/v1, max_retries: -1}
workspace: ws
tools: [{module: builtin, only: [read_file]}]
`, m.URL)), 0o644))
	store := t.TempDir()
	if out, err := exec.Command(bin, "run", "--store", store, "--cache", cache, "--id", "pn", "-f", agent, "read the notes").CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	must(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("notes someone edited\n"), 0o644))

	m.hold()
	run := exec.Command(bin, "run", "--store", store, "--cache", cache, "--id", "pn", "read the notes again")
	var runOut bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runOut
	must(t, run.Start())
	select {
	case held = <-m.held:
	case <-time.After(time.Minute):
		run.Process.Kill()
		t.Fatalf("the second run never asked the model\n%s", runOut.Bytes())
	}
	if !bytes.Contains(held, []byte("read the notes again")) || !bytes.Contains(held, []byte("Files changed outside the agent")) {
		t.Fatalf("the held request has not both the prompt and the note: %s", held)
	}
	run.Process.Kill() // SIGKILL
	run.Wait()
	before := len(m.sent())

	out, err := exec.Command(bin, "resume", "--store", store, "--cache", cache, "--strategy", strategy, "pn").CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	after := m.sent()[before:]
	if len(after) == 0 {
		t.Fatalf("resume asked the model nothing:\n%s", out)
	}
	log, err := exec.Command(bin, "log", "--store", store, "pn").CombinedOutput()
	if err != nil || bytes.Count(log, []byte("read the notes again")) != 1 {
		t.Fatalf("cairn log (%v) does not keep the prompt once:\n%s", err, log)
	}
	return held, after[0]
}

// requestMessages is each message of an OpenAI request as role: content.
func requestMessages(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"messages"`
	}
	must(t, json.Unmarshal(body, &req))
	var out []string
	for _, m := range req.Messages {
		out = append(out, m.Role+": "+cmp.Or(ptrText(m.Content), "(none)"))
	}
	return out
}

func ptrText(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
