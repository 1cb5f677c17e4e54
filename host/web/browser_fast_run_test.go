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
	var mu sync.Mutex
	inFlight, most, looks := 0, 0, 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		look := r.URL.Path == "/api/agents/fast"
		if look {
			mu.Lock()
			inFlight, looks = inFlight+1, looks+1
			most = max(most, inFlight)
			mu.Unlock()
		}
		f.srv.ServeHTTP(w, r)
		if look {
			mu.Lock()
			inFlight--
			mu.Unlock()
		}
	}))
	defer hs.Close()

	const rounds = 1000
	dir := filepath.Join(f.agents, "fast")
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "workspace", "f.txt"), []byte("a line\n"), 0o644))
	script := approvalScript[:strings.Index(approvalScript, "  - text: finished")] +
		strings.Repeat("  - tool_calls: [{name: read_file, input: {path: f.txt}}]\n", rounds) + "  - text: finished\n"
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script), 0o644))
	af, err := host.ParseAgentFile([]byte(approvalAgent+"limits: {max_rounds: 2000}\n"), dir)
	must(t, err)
	asked, decide, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		f.eng.Run(context.Background(), host.RunOptions{Agent: af, ID: "fast", Prompt: "go",
			Approver: func(context.Context, host.ApprovalRequest) (host.Decision, error) {
				close(asked)
				<-decide
				return host.Decision{Approved: true}, nil
			}})
	}()
	<-asked
	p := openPage(t, hs.URL+"/#token="+f.srv.Token()+"&/agent/fast")
	p.waitFor("the call awaiting its decision", `document.body.innerText.includes("needs approval")`)
	close(decide)
	<-ended
	p.waitFor("the run's end", `document.body.innerText.includes("done after `+"1002"+` rounds")`)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d looks at the agent during a run of %d rounds, at most %d at once", looks, rounds+2, most)
	if most > 1 {
		t.Errorf("the page looked at the agent %d times at once", most)
	}
	if looks > rounds/4 {
		t.Errorf("the page looked at the agent %d times in a run of %d rounds", looks, rounds+2)
	}
}
