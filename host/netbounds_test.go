package host

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/internal/guestbuild"
)

var (
	rawNetOnce sync.Once
	rawNetWasm string
	rawNetErr  error
)

// rawNet builds the rawnet test module once: a tool that sends requests
// through the network import byte for byte as it is given them.
func rawNet(t *testing.T) string {
	t.Helper()
	rawNetOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-rawnet-")
		if err != nil {
			rawNetErr = err
			return
		}
		rawNetWasm, rawNetErr = guestbuild.Build(dir, "./testdata/rawnet",
			func(w []byte) ([]byte, error) { return testEngine.Pack(context.Background(), w, nil) })
	})
	if rawNetErr != nil {
		t.Fatal(rawNetErr)
	}
	return rawNetWasm
}

// rawAgent is an agent whose rawnet module has grant, making one call of
// its send tool with input (a YAML flow map) in one round.
func rawAgent(t *testing.T, grant, input string) *AgentFile {
	t.Helper()
	script := "turns:\n  - tool_calls:\n      - {name: send, input: " + input + "}\n  - text: done\n"
	agent := "name: raw\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools:\n  - module: rawnet.wasm\n    grant: " + grant + "\n"
	af := agentIn(t, agent, script)
	copyFile(t, rawNet(t), filepath.Join(af.Dir, "rawnet.wasm"))
	return af
}

// exchangesOf is every exchange of the agent's committed calls.
func exchangesOf(t *testing.T, store checkpoint.Store, agent string) []conversation.Exchange {
	t.Helper()
	in, err := Inspect(t.Context(), store, agent)
	if err != nil {
		t.Fatal(err)
	}
	var exs []conversation.Exchange
	for _, m := range in.State.Messages {
		exs = append(exs, m.Net...)
	}
	return exs
}

// Regression: 18 requests to a host the grant refuses, each with a 4 MB
// URL, were journaled whole, and the call's result (72 MB) was written as a
// frame past what the journal's reader takes: every command then called
// the agent corrupt. A URL past 8 KiB is refused before anything else and
// journaled clipped, with its size; the agent reads, and verifies.
func TestRefusedHugeURLKeepsAgentReadable(t *testing.T) {
	s := newNetServer(t)
	af := rawAgent(t, fmt.Sprintf(`{net: {allow: ["%s"]}}`, s.hostPort()),
		`{requests: [{url: "http://127.0.0.2:1/", pad: 4194304, repeat: 18}]}`)
	eng, store := fileEngine(t)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "huge", Prompt: "go"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v %v", res, err)
	}
	reopened, err := OpenStore(store.(*checkpoint.FileStore).Dir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reopened.Read("huge"); err != nil {
		t.Fatalf("the agent no longer reads: %v", err)
	}
	exs := exchangesOf(t, reopened, "huge")
	if len(exs) != 18 {
		t.Fatalf("%d exchanges journaled, want 18", len(exs))
	}
	for _, ex := range exs {
		if ex.Step != conversation.ExchangeRefused || len(ex.URL) > 1024 || !strings.Contains(ex.URL, "a URL of 4194") ||
			!strings.HasPrefix(ex.URL, "http://127.0.0.2:1/") || !strings.Contains(ex.Error, "8192") {
			t.Fatalf("journaled as %s %.200q (%d bytes): %s", ex.Step, ex.URL, len(ex.URL), ex.Error)
		}
	}
	rep, err := eng.Verify(context.Background(), "huge", VerifyOptions{})
	if err != nil || rep.Diverged != 0 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// Regression: the journal recorded a URL with its query decoded and
// encoded again, which reorders its pairs and drops those with a ';' or a
// bad '%' escape: "?a=1&exfil;card=4111" was recorded as "?a=1". It is
// recorded as sent, only secrets replaced, and verifies.
func TestJournalRecordsQueryAsSent(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RawQuery)
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	query := "b=2&a=1&exfil;card=4111&bad=%zz&api_key=k1"
	af := rawAgent(t, fmt.Sprintf(`{net: {allow: ["%s"]}}`, hostPort), fmt.Sprintf(`{requests: [{url: "%s/q?%s"}]}`, srv.URL, query))
	eng, store := fileEngine(t)
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "query", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != query {
		t.Fatalf("the server saw %q", seen)
	}
	exs := exchangesOf(t, store, "query")
	want := srv.URL + "/q?b=2&a=1&exfil;card=4111&bad=%zz&api_key=[redacted]"
	if len(exs) != 1 || exs[0].URL != want {
		t.Fatalf("journaled %+v, want the URL %s", exs, want)
	}
	rep, err := eng.Verify(context.Background(), "query", VerifyOptions{})
	if err != nil || rep.Diverged != 0 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// Regression: a call whose journal kept only its first 64 refusals
// (maxJournaledRefusals) of more than 64 different requests could never
// verify: the 65th was taken for a request not recorded. Past the refusals
// journaled, a request the grant refuses is refused as it refuses it; the
// request recorded after them is still served.
func TestVerifyManyDifferentRefusalsMatches(t *testing.T) {
	s := newNetServer(t)
	af := rawAgent(t, fmt.Sprintf(`{net: {allow: ["%s"]}}`, s.hostPort()),
		fmt.Sprintf(`{requests: [{url: "http://127.0.0.2:1/", pad: 1, repeat: 70}, {url: "%s/after"}]}`, s.URL))
	eng, store := fileEngine(t)
	var events []Event
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "refusals", Prompt: "go",
		OnEvent: func(e Event) { events = append(events, e) }}); err != nil {
		t.Fatal(err)
	}
	if out := toolEnds(events)[0].Output; !strings.HasSuffix(out, "200 GET /after \n") || strings.Count(out, "not in the allow list") != 70 {
		t.Fatalf("the call answered %q", out)
	}
	if exs := exchangesOf(t, store, "refusals"); len(exs) != maxJournaledRefusals+1 {
		t.Fatalf("%d exchanges journaled, want %d", len(exs), maxJournaledRefusals+1)
	}
	rep, err := eng.Verify(context.Background(), "refusals", VerifyOptions{})
	if err != nil || rep.Diverged != 0 || rep.Calls[0].Status != VerifyMatch {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// Regression: max_response_bytes could be set past the ABI's 16 MiB
// message; a response past it was journaled as received, and the tool was
// given an error instead. Such a grant is refused when the agent starts,
// naming the field and the most it may be.
func TestGrantResponseCapAboveABIRefused(t *testing.T) {
	s := newNetServer(t)
	af := netAgent(t, fmt.Sprintf(`{net: {allow: ["%s"], max_response_bytes: 50MiB}}`, s.hostPort()), fmt.Sprintf(`{url: "%s/hello"}`, s.URL))
	_, err := testEngine.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"})
	if err == nil || !strings.Contains(err.Error(), "max_response_bytes") || !strings.Contains(err.Error(), "15728640") {
		t.Fatalf("got %v; want the grant refused, naming max_response_bytes and its cap", err)
	}
	if s.all.Load() != 0 {
		t.Fatalf("the server saw %d requests", s.all.Load())
	}
}

// Regression: a secret was redacted only as it is; one holding '+', '/'
// or '=' went into the journal whole where a server echoed it
// percent-encoded: in a Location header, and so in the URL of the request
// the tool's client followed it with. Its encoded forms are redacted too.
func TestSecretRedactedWhenPercentEncoded(t *testing.T) {
	const token = "tok+/=9f3c1e"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if r.URL.Path == "/start" {
			// Not http.Redirect, which echoes the Location in its body:
			// this is of the headers (netecho_test.go has a body).
			w.Header().Set("Location", "/landing/"+url.PathEscape(a)+"?code="+url.QueryEscape(a))
			w.WriteHeader(http.StatusFound)
			return
		}
		w.Header().Set("Link", "<http://elsewhere.test/k/"+url.PathEscape(a)+">")
		w.Header().Set("X-Lower", "v="+strings.ToLower(url.QueryEscape(a)))
		io.WriteString(w, "landed")
	}))
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	t.Setenv("CAIRN_TEST_TOKEN", token)
	grant := fmt.Sprintf(`{net: {allow: ["%s"], secrets: [{host: "%s", header: Authorization, value: "Bearer ${CAIRN_TEST_TOKEN}"}]}}`, hostPort, hostPort)
	af := netAgent(t, grant, fmt.Sprintf(`{url: "%s/start"}`, srv.URL))
	eng, store := fileEngine(t)
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "secret", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	exs := exchangesOf(t, store, "secret")
	if len(exs) != 2 || exs[0].Status != http.StatusFound || exs[1].Status != 200 {
		t.Fatalf("exchanges %+v", exs)
	}
	// The tool is given, and the journal records, each encoded form
	// replaced (netguard.HideSecrets), in any case, the rest of the value
	// kept.
	for i, h := range []struct{ name, want string }{
		{"Location", "/landing/[redacted]?code=[redacted]"},
		{"Link", "<http://elsewhere.test/k/[redacted]>"},
		{"X-Lower", "v=[redacted]"},
	} {
		if v := exs[min(i, 1)].ResponseHeader[h.name]; len(v) != 1 || v[0] != h.want {
			t.Errorf("%s recorded as %q, want %q", h.name, v, h.want)
		}
	}
	if want := srv.URL + "/landing/[redacted]?code=[redacted]"; exs[1].URL != want {
		t.Errorf("URL recorded as %s, want %s", exs[1].URL, want)
	}
	for _, form := range []string{token, url.QueryEscape(token), url.PathEscape(token), strings.ToLower(url.QueryEscape(token))} {
		storeHolds(t, store, form, false)
	}
}

// Regression: verify read a response body's blob whole whatever it was:
// a FIFO in its place hung verify for ever, and a sparse file of gigabytes
// was read into memory. A blob that is no regular file is refused; one of
// another size than recorded is a divergence without being read.
func TestVerifyChecksBlobBeforeReading(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(path string) error
		want  string
	}{
		{"sparse file", func(p string) error {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				return err
			}
			return os.Truncate(p, 1<<30)
		}, "1073741824 bytes, where"},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newNetServer(t)
			af := netAgent(t, fmt.Sprintf(`{net: {allow: ["%s"]}}`, s.hostPort()), fmt.Sprintf(`{url: "%s/hello"}`, s.URL))
			eng, store := fileEngine(t)
			if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "blob", Prompt: "go"}); err != nil {
				t.Fatal(err)
			}
			exs := exchangesOf(t, store, "blob")
			path := blobFile(store.(*checkpoint.FileStore).Dir(), exs[0].Blob)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := tc.plant(path); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			done := make(chan *VerifyReport, 1)
			go func() {
				rep, err := eng.Verify(context.Background(), "blob", VerifyOptions{})
				if err != nil {
					t.Error(err)
				}
				done <- rep
			}()
			var rep *VerifyReport
			select {
			case rep = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("verify did not return")
			}
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
				t.Errorf("verify allocated %d bytes", grew)
			}
			if rep == nil || rep.Diverged != 1 || !hasDivergence(rep.Calls[0], DivergeHTTP, "") ||
				!strings.Contains(rep.Calls[0].Divergences[0].Detail, tc.want) {
				t.Fatalf("verify: %+v", rep)
			}
		})
	}
}
