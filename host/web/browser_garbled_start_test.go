package web

import (
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// In a real browser: a call's end whose start the timeline does not have
// (its line garbled on disk, served as a warning in its place) is a call
// of its own, marked failed. The page once marked the whole timeline
// failed instead, every line of it in red.
func TestBrowserCallEndWithoutItsStart(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{Loopback: true})
	f.withHistory("g", checkpoint.StatusPaused, `{"type":"run_start","agent":"g","run":"run-1"}`+"\n"+
		`{"type":"tool_st`+"\x00garbled\n"+
		`{"type":"tool_end","agent":"g","run":"run-1","round":1,"call":{"id":"c1","tool":"write_file","outcome":"error","output":"refused"}}`+"\n"+
		`{"type":"run_end","agent":"g","run":"run-1","round":1,"status":"paused"}`+"\n")

	p := openPage(t, f.http.URL+"/#token="+f.srv.Token()+"&/agent/g")
	p.waitFor("the run's end", `document.querySelector(".timeline").innerText.includes("paused after 1 round") && !document.querySelector(".timeline").innerText.includes("after 1 rounds")`)
	if got := p.eval(`document.querySelector(".timeline").className`); got != "timeline" {
		t.Errorf("the timeline's class is %q", got)
	}
	if got := p.eval(`[...document.querySelectorAll(".timeline .call.error")].map(e => e.innerText).join("|")`); !strings.Contains(got.(string), "write_file c1") {
		t.Errorf("no call is marked failed:\n%v", p.eval(`document.querySelector(".timeline").innerHTML`))
	}
}
