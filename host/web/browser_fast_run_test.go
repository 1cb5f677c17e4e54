package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/host"
)

// Regression: the page of an agent read it again for every round_end
// event, each read starting at once whatever was in flight, and each
// that found the agent changed read its runs and diff too: a run of a
// thousand quick rounds sent the server hundreds of reads of the whole
// agent at the same time, which took the machine from the run. The page
// reads the agent one look at a time, and once more after a look if
// something changed meanwhile.
func TestBrowserFastRunIsReadOneLookAtATime(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{Loopback: true})
	reqs := countRequests(f, "/api/agents/fast")
	defer reqs.server.Close()
	decide, ended := fastRun(t, f, "fast", 1000)
	p := openPage(t, reqs.server.URL+"/#token="+f.srv.Token()+"&/agent/fast")
	p.waitFor("the call awaiting its decision", `document.body.innerText.includes("needs approval")`)
	close(decide)
	<-ended
	p.waitFor("the run's end", `document.body.innerText.includes("done after 1002 rounds")`)
	looks, most, _ := reqs.counts()
	t.Logf("%d looks at the agent during a run of 1002 rounds, at most %d at once", looks, most)
	if most > 1 {
		t.Errorf("the page looked at the agent %d times at once", most)
	}
	if looks > 250 {
		t.Errorf("the page looked at the agent %d times in a run of 1002 rounds", looks)
	}
}

// Regression: a look at the agent still to come when the page was left
// (one in flight, or one waiting its turn) followed the agent's events
// again, for a page no one saw, until the tab closed. Once the agent list
// is shown instead, no request follows the agent.
func TestBrowserLeftPageFollowsTheAgentNoMore(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{Loopback: true})
	reqs := countRequests(f, "/api/agents/fast/events")
	defer reqs.server.Close()
	decide, ended := fastRun(t, f, "fast", 3000)
	p := openPage(t, reqs.server.URL+"/#token="+f.srv.Token()+"&/agent/fast")
	p.waitFor("the call awaiting its decision", `document.body.innerText.includes("needs approval")`)
	close(decide)
	p.waitFor("rounds going by", `document.body.innerText.includes("round 50 committed")`)
	p.call(p.session, "Page.navigate", map[string]any{"url": reqs.server.URL + "/#/"}, nil)
	p.waitFor("the agent list", `document.querySelector('[data-agent="fast"]') !== null`)
	time.Sleep(time.Second) // for a look still to come
	_, _, now := reqs.counts()
	<-ended
	if now != 0 {
		t.Fatalf("%d requests follow the agent's events after its page was left", now)
	}
}

// fastRun starts a run of agent id, of rounds rounds of one read_file
// call after a first call that waits for a decision, which it makes
// (approved) when decide is closed; ended is closed when the run ends.
func fastRun(t *testing.T, f *fixture, id string, rounds int) (decide, ended chan struct{}) {
	dir := filepath.Join(f.agents, id)
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "workspace", "f.txt"), []byte("a line\n"), 0o644))
	script := approvalScript[:strings.Index(approvalScript, "  - text: finished")] +
		strings.Repeat("  - tool_calls: [{name: read_file, input: {path: f.txt}}]\n", rounds) + "  - text: finished\n"
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script), 0o644))
	af, err := host.ParseAgentFile([]byte(approvalAgent+"limits: {max_rounds: 5000}\n"), dir)
	must(t, err)
	asked := make(chan struct{})
	decide, ended = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		f.eng.Run(context.Background(), host.RunOptions{Agent: af, ID: id, Prompt: "go",
			Approver: func(context.Context, host.ApprovalRequest) (host.Decision, error) {
				close(asked)
				<-decide
				return host.Decision{Approved: true}, nil
			}})
	}()
	<-asked
	return decide, ended
}

// requestCounter is a server in front of the fixture's that counts the
// requests of one path: in all, at most at once, and now.
type requestCounter struct {
	server              *httptest.Server
	mu                  sync.Mutex
	all, most, inFlight int
}

func countRequests(f *fixture, path string) *requestCounter {
	c := &requestCounter{}
	c.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			f.srv.ServeHTTP(w, r)
			return
		}
		c.mu.Lock()
		c.inFlight, c.all = c.inFlight+1, c.all+1
		c.most = max(c.most, c.inFlight)
		c.mu.Unlock()
		f.srv.ServeHTTP(w, r)
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}))
	return c
}

func (c *requestCounter) counts() (all, most, now int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.all, c.most, c.inFlight
}
