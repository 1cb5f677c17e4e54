package web

import (
	"strings"
	"testing"
)

// In a real browser: a sub-agent's call that has the id of its parent's
// call (a script model, or an OpenAI-compatible server, numbers calls
// from the start in every agent) is a call of its own in the timeline.
// The page once kept the calls by id alone, so the parent's delegate
// call's outcome and result were put under the sub-agent's call, and the
// delegate call showed none.
func TestBrowserSubAgentCallOfTheParentsCallID(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{Loopback: true})
	f.runLeadDelegatingToAlpha()
	if !strings.Contains(string(f.history("lead")), `"agent":"lead.alpha-`) {
		t.Fatalf("the lead's history has no event of its sub-agent:\n%s", f.history("lead"))
	}
	p := openPage(t, f.http.URL+"/#token="+f.srv.Token()+"&/agent/lead")
	p.waitFor("the run's end", `document.body.innerText.includes("done after 2 rounds")`)
	calls := p.eval(`[...document.querySelectorAll(".timeline .call")].map(c => c.querySelector("b").textContent + ": " + c.querySelectorAll(".mark").length + " marks, ok " + (c.innerText.match(/✓ ok/g) || []).length).join("; ")`)
	if calls != "delegate: 2 marks, ok 1; write_file: 3 marks, ok 1" {
		t.Fatalf("the timeline's calls: %v\n%v", calls, p.eval(`document.querySelector(".timeline").innerText`))
	}
}
