package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Regression: the page of an agent no run holds read everything again
// every two seconds — the agent, its event stream, its runs and its diff
// (which could weigh megabytes) — though nothing had changed. It reads
// the agent (a 304 with no body while it is unchanged), and the rest only
// once the agent has changed: here a call decided behind its back.
func TestBrowserIdleAgentPageRereadsOnlyWhatChanged(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")
	var mu sync.Mutex
	seen := map[string]int{}
	notModified := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		f.srv.ServeHTTP(rec, r)
		mu.Lock()
		defer mu.Unlock()
		seen[r.URL.Path]++
		if rec.status == http.StatusNotModified {
			notModified++
		}
	}))
	defer hs.Close()
	count := func(suffix string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for p, c := range seen {
			if strings.HasSuffix(p, suffix) {
				n += c
			}
		}
		return n
	}
	p := openPage(t, hs.URL+"/#token="+f.srv.Token()+"&/agent/ap")
	p.waitFor("the call awaiting approval", `document.querySelector('[data-call="call_1_0"]') !== null`)
	time.Sleep(time.Second)
	runs, diff, events, agent := count("/runs"), count("/diff"), count("/events"), count("/api/agents/ap")
	time.Sleep(5 * time.Second) // two looks at the agent, at least
	if n := count("/api/agents/ap"); n < agent+2 {
		t.Fatalf("the page looked at the agent %d times in 5 s; want it to keep looking", n-agent)
	}
	if count("/runs") != runs || count("/diff") != diff || count("/events") != events {
		t.Fatalf("while nothing changed the page read runs %d, diff %d, events %d times again",
			count("/runs")-runs, count("/diff")-diff, count("/events")-events)
	}
	mu.Lock()
	if notModified == 0 {
		t.Errorf("no look at the unchanged agent was answered 304")
	}
	mu.Unlock()

	// A decision made elsewhere changes the agent: the page reads it all.
	f.decode(f.post("/api/agents/ap/approvals/call_1_0/approve", struct{}{}), http.StatusOK, nil)
	p.waitFor("the decided call gone", `document.querySelector('[data-call="call_1_0"]') === null`)
	if count("/runs") == runs {
		t.Fatalf("the page did not read the runs again once the agent changed")
	}
}

// statusRecorder notes the status an answer was given.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) Flush() {
	if fl, ok := r.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}
