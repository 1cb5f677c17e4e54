package host

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// Regression: a secret a server echoed in a redirect's Location reached
// the fetch tool's result, which names the URL it ended at (the one the
// redirect led to), and so the journal, cairn log, the events and the
// model's context; and one echoed in a response header's name was
// journaled in clear (in the case net/http gave the name). The host gives
// the tool response headers with every secret value Redacted, and
// redacts names in what it journals.
func TestFetchResultHoldsNoSecretARedirectEchoed(t *testing.T) {
	const token = "Tok7Q2wE9rSecretX"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch r.URL.Path {
		case "/start":
			w.Header().Set("Location", "/landing?v="+tok)
			w.WriteHeader(http.StatusFound)
		case "/named":
			w.Header()["X-"+tok] = []string{"1"}
			io.WriteString(w, "named")
		default:
			io.WriteString(w, "landed")
		}
	}))
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	t.Setenv("CAIRN_TEST_TOKEN", token)
	agent := fmt.Sprintf("name: fetch\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools:\n  - module: fetch\n"+
		"    grant: {net: {allow: [%q], secrets: [{host: %q, header: Authorization, value: \"Bearer ${CAIRN_TEST_TOKEN}\"}]}}\n", hostPort, hostPort)
	script := fmt.Sprintf("turns:\n  - tool_calls: [{name: fetch, input: {url: \"%s/start\"}}, {name: fetch, input: {url: \"%s/named\"}}]\n  - text: done\n", srv.URL, srv.URL)
	af := agentIn(t, agent, script)
	eng, store := fileEngine(t)
	var ends []*Call
	_, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "echo", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventToolEnd {
			ends = append(ends, e.Call)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ends) != 2 {
		t.Fatalf("%d calls ended", len(ends))
	}
	for _, c := range ends {
		if c.Outcome != OutcomeOK || strings.Contains(strings.ToLower(c.Output), strings.ToLower(token)) {
			t.Errorf("fetch: %+v", c)
		}
	}
	if out := ends[0].Output + ends[1].Output; !strings.Contains(out, "/landing?v=[redacted]") {
		t.Errorf("the redirect was not followed as the tool was given it: %s", out)
	}
	storeHolds(t, store, token, false)
	storeHolds(t, store, strings.ToLower(token), false)
	storeHolds(t, store, http.CanonicalHeaderKey("X-"+token), false) // the name as net/http gave it
}

// Regression: a secret a server echoed in a response's body (an echo
// service, an error page quoting the request) reached the fetch tool,
// which answers with the body's text, and so the call's result: the
// journal, cairn log, the events and the model's context; and the body
// was kept in the store as it came. The tool is given the body with each
// secret replaced, in any case and escaped, and the store keeps that.
func TestFetchResultHoldsNoSecretABodyEchoed(t *testing.T) {
	const token = "Tok7Q2wE9rSecretX"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		fmt.Fprintf(w, "you sent %s; as a query %s; in capitals %s.", auth, url.QueryEscape(auth), strings.ToUpper(auth))
	}))
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	t.Setenv("CAIRN_TEST_TOKEN", token)
	agent := fmt.Sprintf("name: fetch\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools:\n  - module: fetch\n"+
		"    grant: {net: {allow: [%q], secrets: [{host: %q, header: Authorization, value: \"Bearer ${CAIRN_TEST_TOKEN}\"}]}}\n", hostPort, hostPort)
	script := fmt.Sprintf("turns:\n  - tool_calls: [{name: fetch, input: {url: \"%s/echo\"}}]\n  - text: done\n", srv.URL)
	eng, store := fileEngine(t)
	var ends []*Call
	_, err := eng.Run(context.Background(), RunOptions{Agent: agentIn(t, agent, script), ID: "echo", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventToolEnd {
			ends = append(ends, e.Call)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ends) != 1 || ends[0].Outcome != OutcomeOK || !strings.Contains(ends[0].Output, "you sent [redacted]; as a query [redacted]; in capitals [redacted].") {
		t.Fatalf("fetch: %+v", ends)
	}
	for _, form := range []string{token, strings.ToLower(token), strings.ToUpper(token)} {
		storeHolds(t, store, form, false)
	}
	exs := exchangesOf(t, store, "echo")
	if len(exs) != 1 || exs[0].Blob == "" || exs[0].ResponseSize != int64(len("you sent [redacted]; as a query [redacted]; in capitals [redacted].")) {
		t.Errorf("exchanges %+v", exs)
	}
}
