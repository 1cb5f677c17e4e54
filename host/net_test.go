package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/guestbuild"
)

var (
	netToolOnce sync.Once
	netToolWasm string
	netToolErr  error
)

// netTool builds the nettool test module once.
func netTool(t *testing.T) string {
	t.Helper()
	netToolOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-nettool-")
		if err != nil {
			netToolErr = err
			return
		}
		netToolWasm, netToolErr = guestbuild.Build(dir, "./testdata/nettool",
			func(w []byte) ([]byte, error) { return testEngine.Pack(context.Background(), w, nil) })
	})
	if netToolErr != nil {
		t.Fatal(netToolErr)
	}
	return netToolWasm
}

// netServer is a loopback server that counts requests by path and keeps
// the Authorization header it last saw.
type netServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
	auth string
	all  atomic.Int32
}

func newNetServer(t *testing.T) *netServer {
	s := &netServer{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.all.Add(1)
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.auth = r.Header.Get("Authorization")
		s.mu.Unlock()
		switch r.URL.Path {
		case "/redirect":
			// A name allowed by "*" that resolves to loopback.
			http.Redirect(w, r, "http://localhost/latest/meta-data/", http.StatusFound)
		case "/big":
			w.Write(bytes.Repeat([]byte("x"), 2000))
		default:
			// Echoed in response headers, as some servers do: the journal
			// once kept such a copy of a secret in clear.
			if a := r.Header.Get("Authorization"); a != "" {
				w.Header().Set("X-Echo", a)
				w.Header().Set("Link", "<http://elsewhere/?q="+url.QueryEscape(a)+">")
			}
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, b)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *netServer) hostPort() string { return strings.TrimPrefix(s.URL, "http://") }

func (s *netServer) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

const testToken = "tok-4f1d9c2e-secret"

// netAgent is an agent whose nettool module has grant, calling http with
// each input of calls in one round.
func netAgent(t *testing.T, grant string, calls ...string) *AgentFile {
	t.Helper()
	var script strings.Builder
	script.WriteString("turns:\n  - tool_calls:\n")
	for _, c := range calls {
		fmt.Fprintf(&script, "      - {name: http, input: %s}\n", c)
	}
	script.WriteString("  - text: done\n")
	agent := "name: net\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools:\n  - module: nettool.wasm\n    grant: " + grant + "\n"
	af := agentIn(t, agent, script.String())
	copyFile(t, netTool(t), filepath.Join(af.Dir, "nettool.wasm"))
	return af
}

// GET and POST through the guest SDK's RoundTripper from a real wasm
// tool: the secret header reaches the server, and neither the guest's
// output nor anything in the store holds it; every exchange is in the
// call's record with its response body kept by digest.
func TestNetGetAndPost(t *testing.T) {
	s := newNetServer(t)
	t.Setenv("CAIRN_TEST_TOKEN", testToken)
	grant := fmt.Sprintf(`{net: {allow: ["%s"], methods: [GET, POST], secrets: [{host: "%s", header: Authorization, value: "Bearer ${CAIRN_TEST_TOKEN}"}]}}`,
		s.hostPort(), s.hostPort())
	af := netAgent(t, grant, fmt.Sprintf(`{url: "%s/hello"}`, s.URL), fmt.Sprintf(`{method: POST, url: "%s/post", body: "hi there"}`, s.URL))
	eng, store := fileEngine(t)
	var events []Event
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, Prompt: "go", OnEvent: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	ends := toolEnds(events)
	if len(ends) != 2 || outputs(ends) != "200 GET /hello |200 POST /post hi there" {
		t.Fatalf("tool ends: %+v", ends)
	}
	for _, c := range ends {
		if c.Outcome != OutcomeOK || c.Net == nil || c.Net.Requests != 1 || strings.Contains(c.Output, testToken) {
			t.Errorf("call %s: %+v (net %+v)", c.ID, c, c.Net)
		}
	}
	if s.auth != "Bearer "+testToken {
		t.Errorf("the server saw Authorization %q", s.auth)
	}
	in, err := Inspect(t.Context(), store, res.Agent)
	if err != nil {
		t.Fatal(err)
	}
	var exs []conversation.Exchange
	for _, m := range in.State.Messages {
		exs = append(exs, m.Net...)
	}
	if len(exs) != 2 {
		t.Fatalf("the call records hold %d exchanges: %+v", len(exs), exs)
	}
	for _, ex := range exs {
		body, err := store.Blob(ex.Blob)
		if ex.Step != conversation.ExchangeReceived || ex.Status != 200 || err != nil || ex.ResponseDigest != ex.Blob ||
			!strings.HasPrefix(string(body), ex.Method+" /") || ex.RequestHeader["Authorization"] != nil {
			t.Errorf("exchange %+v, kept body %q, %v", ex, body, err)
		}
	}
	storeHolds(t, store, testToken, false)
	if exs[1].RequestDigest != digestOf([]byte("hi there")) || exs[1].RequestSize != 8 {
		t.Errorf("the POST's body is recorded as %s, %d bytes", exs[1].RequestDigest, exs[1].RequestSize)
	}
	if u := in.State.Usage; u.NetRequests != 2 || u.NetSentBytes != 8 || u.NetReceivedBytes != exs[0].ResponseSize+exs[1].ResponseSize {
		t.Errorf("the state's usage counts %d requests, %d bytes sent, %d received", u.NetRequests, u.NetSentBytes, u.NetReceivedBytes)
	}
}

// storeHolds checks whether any file of a file store contains s.
func storeHolds(t *testing.T, store checkpoint.Store, s string, want bool) {
	t.Helper()
	fstore, ok := store.(*checkpoint.FileStore)
	if !ok {
		t.Fatalf("a %T", store)
	}
	found := ""
	filepath.WalkDir(fstore.Dir(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(s)) {
				found = p
			}
		}
		return nil
	})
	if (found != "") != want {
		t.Errorf("the store holds %q: %q", s, found)
	}
}

// Refusals reach the tool as errors the model reads, are journaled as
// refused, and reach no server: a host not allowed, a redirect to the
// metadata address, a method not granted, too many requests, a body
// past its limit.
func TestNetRefusals(t *testing.T) {
	s := newNetServer(t)
	grant := fmt.Sprintf(`{net: {allow: ["%s", "*"], max_requests: 4, max_response_bytes: 1000}}`, s.hostPort())
	af := netAgent(t, grant,
		`{url: "http://127.0.0.2:1/"}`,
		fmt.Sprintf(`{url: "%s/redirect"}`, s.URL),
		fmt.Sprintf(`{method: DELETE, url: "%s/x"}`, s.URL),
		fmt.Sprintf(`{url: "%s/big"}`, s.URL))
	eng, store := fileEngine(t)
	var events []Event
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, Prompt: "go", OnEvent: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"call_1_0": "not in the allow list", "call_1_1": "special address",
		"call_1_2": "method DELETE is not granted", "call_1_3": "max_response_bytes"}
	for _, c := range toolEnds(events) {
		if c.Outcome != OutcomeError || !strings.Contains(c.Output, want[c.ID]) {
			t.Errorf("call %s: %q; want an error saying %q", c.ID, c.Output, want[c.ID])
		}
	}
	if s.count("/redirect") != 1 || s.count("/x") != 0 || s.count("/big") != 1 {
		t.Errorf("the server saw %v", s.hits)
	}
	in, err := Inspect(t.Context(), store, res.Agent)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string][]conversation.ExchangeStep{}
	for _, m := range in.State.Messages {
		for _, ex := range m.Net {
			steps[m.CallID] = append(steps[m.CallID], ex.Step)
		}
	}
	if fmt.Sprint(steps) != "map[call_1_0:[refused] call_1_1:[received refused] call_1_2:[refused] call_1_3:[failed]]" {
		t.Errorf("journaled steps: %v", steps)
	}
}

// Each call has its own max_requests; a call past it is refused.
func TestNetTooManyRequests(t *testing.T) {
	s := newNetServer(t)
	grant := fmt.Sprintf(`{net: {allow: ["%s"], max_requests: 1}}`, s.hostPort())
	af := netAgent(t, grant, fmt.Sprintf(`{url: "%s/redirect"}`, s.URL))
	_, events := collect(t, RunOptions{Agent: af, Prompt: "go"})
	if c := toolEnds(events)[0]; c.Outcome != OutcomeError || !strings.Contains(c.Output, "max_requests") {
		t.Fatalf("got %+v", c)
	}
}

// A module that imports the network without a net grant, or whose
// manifest asks for hosts its grant does not cover, does not start.
func TestNetGrantRefusedAtStart(t *testing.T) {
	for name, grant := range map[string]string{
		"no net":            `{workspace: ""}`,
		"needs not covered": `{net: {allow: ["api.example.com"]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			af := netAgent(t, grant, `{url: "http://127.0.0.1:1/"}`)
			_, err := testEngine.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"})
			if !errors.Is(err, ErrGrant) || !strings.Contains(err.Error(), "net") {
				t.Fatalf("got %v; want ErrGrant about the network", err)
			}
		})
	}
}

// A secret whose environment variable is not set stops the agent at
// start, naming it.
func TestNetSecretUnset(t *testing.T) {
	af := netAgent(t, `{net: {allow: ["127.0.0.1:9"], secrets: [{host: "127.0.0.1:9", header: X-Key, value: "${CAIRN_TEST_UNSET_SECRET}"}]}}`, `{url: "http://127.0.0.1:9/"}`)
	_, err := testEngine.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"})
	if !errors.Is(err, ErrSecretUnset) || !strings.Contains(err.Error(), "CAIRN_TEST_UNSET_SECRET") {
		t.Fatalf("got %v", err)
	}
}

// Regression: a secret whose environment variable was set but empty
// was taken as it read: "Bearer ${TOKEN}" sent "Bearer " and no key, and
// "Bearer " was then the secret hidden from the tool wherever a server
// wrote it ("a Bearer token" read "a [redacted]token"). It stops the
// agent at start, naming the variable, as one not set does.
func TestNetSecretEmptyRefused(t *testing.T) {
	t.Setenv("CAIRN_TEST_EMPTY_SECRET", "")
	af := netAgent(t, `{net: {allow: ["127.0.0.1:9"], secrets: [{host: "127.0.0.1:9", header: Authorization, value: "Bearer ${CAIRN_TEST_EMPTY_SECRET}"}]}}`, `{url: "http://127.0.0.1:9/"}`)
	_, err := testEngine.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"})
	if !errors.Is(err, ErrSecretUnset) || !strings.Contains(err.Error(), "CAIRN_TEST_EMPTY_SECRET is empty") {
		t.Fatalf("got %v", err)
	}
}

// outputs is the calls' outputs in call order, joined by "|".
func outputs(calls []*Call) string {
	byID := map[string]string{}
	var ids []string
	for _, c := range calls {
		byID[c.ID] = c.Output
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	var out []string
	for _, id := range ids {
		out = append(out, byID[id])
	}
	return strings.Join(out, "|")
}

// The embedded fetch tool reduces an HTML page to its text, through the
// grant; without a net grant an agent naming it does not start.
func TestFetchTool(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>Tide tables</title><script>steal()</script></head><body><p>High water at <b>06:12</b>.</p></body></html>`)
	}))
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	agent := "name: fetch\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools:\n  - module: fetch\n    grant: {net: {allow: [\"" + hostPort + "\"]}}\n"
	af := agentIn(t, agent, "turns:\n  - tool_calls: [{name: fetch, input: {url: \""+srv.URL+"/tides\"}}]\n  - text: done\n")
	_, events := collect(t, RunOptions{Agent: af, Prompt: "go"})
	c := toolEnds(events)[0]
	if c.Outcome != OutcomeOK || !strings.HasSuffix(c.Output, "# Tide tables\n\nHigh water at 06:12.") || strings.Contains(c.Output, "steal") {
		t.Fatalf("fetch: %+v", c)
	}
	noGrant := agentIn(t, "name: fetch\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools:\n  - module: fetch\n", "turns:\n  - text: done\n")
	if _, err := testEngine.Run(context.Background(), RunOptions{Agent: noGrant, Prompt: "go"}); !errors.Is(err, ErrGrant) {
		t.Fatalf("fetch without a grant: %v", err)
	}
}

// Regression: a secret whose environment variable ends in a newline (a
// token read from a file, a Kubernetes secret) or holds another control
// character was taken as it read, and every request to its host failed
// when it was sent, told to the model as "not sent: no connection:
// net/http: invalid header field value", which says nothing of the
// variable. It stops the agent at start, naming the variable and the
// header; no request is made.
func TestNetSecretWithControlCharacterRefused(t *testing.T) {
	s := newNetServer(t)
	t.Setenv("CAIRN_TEST_NL_SECRET", "tok9f3c\n")
	af := netAgent(t, fmt.Sprintf(`{net: {allow: ["%s"], secrets: [{host: "%s", header: Authorization, value: "Bearer ${CAIRN_TEST_NL_SECRET}"}]}}`, s.hostPort(), s.hostPort()),
		fmt.Sprintf(`{url: "%s/hello"}`, s.URL))
	_, err := testEngine.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"})
	if err == nil || !strings.Contains(err.Error(), "CAIRN_TEST_NL_SECRET") || !strings.Contains(err.Error(), "control character") || !strings.Contains(err.Error(), "Authorization") {
		t.Fatalf("got %v; want the agent refused at start, naming the variable", err)
	}
	if s.all.Load() != 0 {
		t.Fatalf("the server saw %d requests", s.all.Load())
	}
}
