package web

import (
	"testing"
	"time"
)

// In a real browser: the reason a person types for a denial stays in its
// field while the page reads the agent again (every two seconds while no
// run goes on), and Deny sends it. The page once made the field anew at
// each read, so what was typed was gone within two seconds and the call
// was denied without it.
func TestBrowserDenyReasonSurvivesARefresh(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")
	p := openPage(t, f.http.URL+"/#token="+f.srv.Token()+"&/agent/ap")
	field := `document.querySelector('[data-call="call_1_0"] input')`
	p.waitFor("the reason's field", field+` !== null`)
	p.eval(`(e => { e.focus(); e.value = "not out.txt, write drafts/out.txt"; e.dispatchEvent(new Event("input")); return true })(` + field + `)`)
	time.Sleep(5 * time.Second) // two reads of the agent, at least
	if got := p.eval(field + `.value`); got != "not out.txt, write drafts/out.txt" {
		t.Fatalf("the reason's field holds %q after the page read the agent again", got)
	}
	p.click(`[data-call="call_1_0"] button.deny`)
	p.waitFor("no call awaiting", `document.querySelector('[data-call]') === null`)
	if r := lastRecord(t, f, "ap"); r.Call != "call_1_0" || r.Reason != "not out.txt, write drafts/out.txt" {
		t.Fatalf("the click journaled %+v", r)
	}
}
