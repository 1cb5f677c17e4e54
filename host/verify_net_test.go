package host

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox"
)

// A call that reached the network verifies with no network: its recorded
// responses are served from the store, the secret its grant names need
// not be set, and the server sees no request. A response body changed in
// the store is a divergence naming the request.
func TestVerifyReplaysHTTP(t *testing.T) {
	s := newNetServer(t)
	t.Setenv("CAIRN_TEST_TOKEN", testToken)
	grant := fmt.Sprintf(`{net: {allow: ["%s"], methods: [GET, POST], secrets: [{host: "%s", header: Authorization, value: "Bearer ${CAIRN_TEST_TOKEN}"}]}}`,
		s.hostPort(), s.hostPort())
	af := netAgent(t, grant, fmt.Sprintf(`{url: "%s/hello"}`, s.URL), fmt.Sprintf(`{method: POST, url: "%s/post", body: "hi there"}`, s.URL))
	eng, store := fileEngine(t)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "fetcher", Prompt: "go"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v %v", res, err)
	}
	sent := s.all.Load()
	os.Unsetenv("CAIRN_TEST_TOKEN")
	rep, err := eng.Verify(context.Background(), "fetcher", VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Calls) != 2 || rep.Diverged != 0 {
		t.Fatalf("honest run: %+v", rep)
	}
	if s.all.Load() != sent {
		t.Fatalf("verify sent %d requests", s.all.Load()-sent)
	}
	in, err := Inspect(t.Context(), store, "fetcher")
	if err != nil {
		t.Fatal(err)
	}
	var post conversation.Exchange
	for _, m := range in.State.Messages {
		for _, ex := range m.Net {
			if ex.Method == "POST" {
				post = ex
			}
		}
	}
	dir := store.(*checkpoint.FileStore).Dir()
	if err := os.WriteFile(blobFile(dir, post.Blob), []byte("POST /post forged"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err = eng.Verify(context.Background(), "fetcher", VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Diverged != 1 || rep.Calls[0].Status != VerifyMatch {
		t.Fatalf("changed response: %+v", rep)
	}
	c := rep.Calls[1]
	if !hasDivergence(c, DivergeHTTP, "request 1 (POST "+s.URL+"/post)") || !hasDivergence(c, DivergeOutput, "") {
		t.Fatalf("changed response: %v", c.Divergences)
	}
}

// The replaying Net serves recorded exchanges in order and notes a
// request other than the recorded one, one more than recorded, and one
// recorded that was not sent again.
func TestNetReplayDivergences(t *testing.T) {
	store := checkpoint.NewMemStore()
	blob, _ := store.PutBlob([]byte("hello"))
	recorded := []conversation.Exchange{
		{Seq: 1, Step: conversation.ExchangeReceived, Method: "GET", URL: "http://a.test/x", Status: 200, Blob: blob, ResponseSize: 5},
		{Seq: 2, Step: conversation.ExchangeReceived, Method: "GET", URL: "http://a.test/y", Status: 200, Blob: blob, ResponseSize: 5},
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		reqs []string
		want []string
	}{
		{"same", []string{"GET http://a.test/x", "GET http://a.test/y"}, nil},
		{"other URL", []string{"GET http://a.test/x", "GET http://a.test/z"}, []string{"request 2 (GET http://a.test/y): request URL differs"}},
		{"other method", []string{"POST http://a.test/x"}, []string{"request 1 (GET http://a.test/x): request method differs", "the call sent 1 request; 2 were recorded"}},
		{"one more", []string{"GET http://a.test/x", "GET http://a.test/y", "GET http://a.test/x"}, []string{"request 3: the call sent more requests than were recorded: 1 past the 2 recorded"}},
		{"one less", []string{"GET http://a.test/x"}, []string{"the call sent 1 request; 2 were recorded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &netReplay{store: store, recorded: recorded}
			for i, r := range tc.reqs {
				method, url, _ := strings.Cut(r, " ")
				resp, err := n.RoundTrip(ctx, &sandbox.NetRequest{Method: method, URL: url})
				if err == nil && (resp.Status != 200 || string(resp.Body) != "hello") {
					t.Errorf("request %d: served %+v", i+1, resp)
				}
			}
			divs := n.finish()
			if len(divs) != len(tc.want) {
				t.Fatalf("divergences %v, want %q", divs, tc.want)
			}
			for i, d := range divs {
				if !strings.Contains(d.String(), tc.want[i]) {
					t.Errorf("divergence %q, want %q", d, tc.want[i])
				}
			}
		})
	}
}

// Regression: a call refused the same request past the refusals its
// journal keeps (maxJournaledRefusals) verified as "the call sent request
// 65; 64 were recorded". Past that many, a request the grant refuses is
// the refusal the journal did not keep; a request after it that was
// recorded (here one that reached no peer) is still served.
func TestVerifyRefusalsPastTheJournaledOnes(t *testing.T) {
	var recorded []conversation.Exchange
	for i := range maxJournaledRefusals {
		recorded = append(recorded, conversation.Exchange{Seq: i + 1, Step: conversation.ExchangeRefused,
			Method: "GET", URL: "http://no.test/", Error: "refused: no.test is not in the allow list"})
	}
	recorded = append(recorded, conversation.Exchange{Seq: maxJournaledRefusals + 1, Step: conversation.ExchangeRefused,
		Method: "GET", URL: "http://other.test/", Error: "not sent: no connection: other.test does not resolve"})
	j, n := replayed(t, recorded, "other.test")
	for i := range maxJournaledRefusals + 6 {
		if _, err := j.RoundTrip(context.Background(), getReq("http://no.test/")); err == nil || !strings.Contains(err.Error(), "no.test") ||
			!strings.Contains(err.Error(), "is not in the allow list") {
			t.Fatalf("request %d: %v, want the refusal", i+1, err)
		}
	}
	if _, err := j.RoundTrip(context.Background(), getReq("http://other.test/")); err == nil || !strings.Contains(err.Error(), "other.test does not resolve") {
		t.Fatalf("the request recorded after them: %v", err)
	}
	if divs := n.finish(); len(divs) != 0 {
		t.Fatalf("divergences %v", divs)
	}
}

// Regression: verify built the call's grant without its secrets, so a
// plain-http request that would have carried one, which the live grant
// refused, was admitted there and not counted as a refusal: a call with
// more refusals than its journal keeps (maxJournaledRefusals) then
// verified as "the call sent more requests than were recorded". The
// grant verify asks refuses such a request as the live one did, with
// the secret's variable unset.
func TestVerifyCountsClearTextRefusalsAsTheGrantDid(t *testing.T) {
	s := newNetServer(t)
	t.Setenv("CAIRN_TEST_VERIFY_CLEARTEXT", "tok-9f3c1d2e")
	af := rawAgent(t, fmt.Sprintf(`{net: {allow: ["api.example", "%s"], secrets: [{host: api.example, header: X-Key, value: "${CAIRN_TEST_VERIFY_CLEARTEXT}"}]}}`, s.hostPort()),
		fmt.Sprintf(`{requests: [{url: "http://api.example/", repeat: 3}, {url: "http://127.0.0.2:1/", pad: 1, repeat: 66}, {url: "%s/after"}]}`, s.URL))
	eng, store := fileEngine(t)
	var events []Event
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "cleartext", Prompt: "go",
		OnEvent: func(e Event) { events = append(events, e) }}); err != nil {
		t.Fatal(err)
	}
	if out := toolEnds(events)[0].Output; !strings.HasSuffix(out, "200 GET /after \n") || strings.Count(out, "in clear text") != 3 {
		t.Fatalf("the call answered %q", out)
	}
	if exs := exchangesOf(t, store, "cleartext"); len(exs) != maxJournaledRefusals+1 {
		t.Fatalf("%d exchanges journaled, want %d", len(exs), maxJournaledRefusals+1)
	}
	os.Unsetenv("CAIRN_TEST_VERIFY_CLEARTEXT")
	rep, err := eng.Verify(context.Background(), "cleartext", VerifyOptions{})
	if err != nil || rep.Diverged != 0 || rep.Calls[0].Status != VerifyMatch {
		t.Fatalf("verify: %v\n%+v", err, rep)
	}
}
