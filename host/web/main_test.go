package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

var testCache string // compiled modules, shared by the tests' engines

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cairn-web-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testCache = filepath.Join(dir, "cache")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// An agent whose first round asks to write out.txt (which needs a
// person's approval) and drafts/d.txt (which does not).
const approvalAgent = `
name: approvals
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
approvals:
  - {tool: write_file, args: {path: "drafts/**"}, action: allow}
  - {tool: write_file, action: ask}
`

const approvalScript = `
turns:
  - text: Writing.
    tool_calls:
      - {name: write_file, input: {path: out.txt, content: hello}}
      - {name: write_file, input: {path: drafts/d.txt, content: draft}}
  - text: finished
`

// fixture is a real file store, an engine on it, and a server over real
// HTTP on loopback.
type fixture struct {
	t      testing.TB
	eng    *host.Engine
	store  checkpoint.Store
	srv    *Server
	http   *httptest.Server
	agents string // the directory of the agent files
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	store, err := host.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newFixtureOn(t, cfg, store)
}

// newFixtureOn is newFixture on a store the test made.
func newFixtureOn(t testing.TB, cfg Config, store checkpoint.Store) *fixture {
	t.Helper()
	eng, err := host.NewEngine(context.Background(), host.Config{CacheDir: testCache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Engine = eng
	srv := New(cfg)
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = Listener(hs.Listener)
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
		eng.Close(context.Background())
	})
	return &fixture{t: t, eng: eng, store: store, srv: srv, http: hs, agents: t.TempDir()}
}

// run runs an agent of the script model under id until it stops.
func (f *fixture) run(id, agentYAML, scriptYAML string) (*host.AgentFile, *host.Result) {
	f.t.Helper()
	dir := filepath.Join(f.agents, id)
	for _, d := range []string{dir, filepath.Join(dir, "workspace")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(scriptYAML), 0o644); err != nil {
		f.t.Fatal(err)
	}
	af, err := host.ParseAgentFile([]byte(agentYAML), dir)
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := f.eng.Run(context.Background(), host.RunOptions{Agent: af, ID: id, Prompt: "go"})
	if err != nil {
		f.t.Fatal(err)
	}
	return af, res
}

// do sends a request; a non-nil body makes it a POST. auth is the
// Authorization header, if any.
func (f *fixture) do(path string, body any, auth string, header ...string) *http.Response {
	f.t.Helper()
	method, rd := http.MethodGet, io.Reader(nil)
	if body != nil {
		b, _ := json.Marshal(body)
		method, rd = http.MethodPost, strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, f.http.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// post sends a state change with the token.
func (f *fixture) post(path string, body any) *http.Response {
	return f.do(path, body, "Bearer "+f.srv.Token())
}

// getJSON reads a GET's JSON answer into v, wanting status 200.
func (f *fixture) getJSON(path string, v any) {
	f.t.Helper()
	f.decode(f.do(path, nil, ""), http.StatusOK, v)
}

// decode reads resp's JSON body into v, wanting the status.
func (f *fixture) decode(resp *http.Response, status int, v any) {
	f.t.Helper()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		f.t.Fatalf("%s %s: %d %s, want %d", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, b, status)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			f.t.Fatalf("%s: %v in %s", resp.Request.URL.Path, err, b)
		}
	}
}

// sse reads a Server-Sent Events answer to its end event and returns the
// data of its messages, each with a newline, as `cairn events --json`
// would print them.
func sse(t *testing.T, resp *http.Response) (data []byte, ids []string) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			ids = append(ids, strings.TrimPrefix(line, "id: "))
		case strings.HasPrefix(line, "data: ") && event == "end":
			if msg := strings.TrimPrefix(line, "data: "); msg != "" {
				t.Fatalf("stream ended with %s", msg)
			}
			return data, ids
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: ")+"\n"...)
		}
	}
	t.Fatalf("stream closed without its end event: %v", sc.Err())
	return nil, nil
}

// history is the agent's event history as `cairn events --json` prints
// it: each line host.ReadHistory gives, and a newline.
func (f *fixture) history(id string) []byte {
	f.t.Helper()
	var out []byte
	err := host.ReadHistory(context.Background(), f.store, id, false, func(_ host.Event, line []byte) error {
		out = append(append(out, line...), '\n')
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// withHistory stores an agent of status st whose event history is the
// JSON lines of history, as a run (or a disk that garbled them) left it.
func (f *fixture) withHistory(id string, status checkpoint.Status, history string) {
	t := f.t
	lock, err := f.store.Lock(id, checkpoint.ThisProcess("test"))
	must(t, err)
	defer lock.Unlock()
	st := checkpoint.NewState(id, checkpoint.Definition{Workspace: t.TempDir()}, checkpoint.Labels{}, time.Now())
	st.Status = status
	log, err := f.store.Create(id, st)
	must(t, err)
	must(t, log.Close())
	w, err := f.store.Events(id)
	must(t, err)
	_, err = io.WriteString(w, history)
	must(t, err)
	must(t, w.Close())
}

// runLeadDelegatingToAlpha runs agent lead, whose one round delegates to
// its sub-agent alpha, which writes alpha.txt, and returns lead's agent
// file.
func (f *fixture) runLeadDelegatingToAlpha() *host.AgentFile {
	f.t.Helper()
	dir := filepath.Join(f.agents, "lead")
	must(f.t, os.MkdirAll(dir, 0o755))
	must(f.t, os.WriteFile(filepath.Join(dir, "alpha.yaml"), []byte(`
turns:
  - tool_calls: [{name: write_file, input: {path: alpha.txt, content: alpha}}]
  - text: wrote alpha.txt
`), 0o644))
	af, _ := f.run("lead", `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
agents:
  - name: alpha
    description: writes alpha.txt
    model: {provider: script, script: alpha.yaml}
    tools: [{module: builtin, only: [write_file]}]
`, `
turns:
  - tool_calls: [{name: delegate, input: {agent: alpha, task: write alpha.txt}}]
  - text: done
`)
	return af
}
