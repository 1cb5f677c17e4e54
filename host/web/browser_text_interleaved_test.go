package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// In a real browser: the model text of two sub-agents that run side by
// side, whose pieces the history interleaves, is shown as each one's:
// the page once put a piece in the row of the text before it, whichever
// agent's it was, so that one sub-agent's words appeared under the
// other's name.
func TestBrowserInterleavedTextOfSubAgents(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{Loopback: true})
	text := func(agent, s string) string {
		return fmt.Sprintf(`{"type":"model_text","agent":%q,"run":"run-%s","depth":1,"round":1,"text":%q}`+"\n", agent, agent, s)
	}
	f.withHistory("lead", checkpoint.StatusDone, `{"type":"run_start","agent":"lead","run":"run-1"}`+"\n"+
		text("lead.a-1", "alpha one ")+text("lead.b-1", "beta one ")+
		text("lead.a-1", "alpha two")+text("lead.b-1", "beta two")+
		`{"type":"run_end","agent":"lead","run":"run-1","round":1,"status":"done"}`+"\n")

	p := openPage(t, f.http.URL+"/#token="+f.srv.Token()+"&/agent/lead")
	p.waitFor("the run's end", `document.querySelector(".timeline").innerText.includes("done after 1 round") && !document.querySelector(".timeline").innerText.includes("after 1 rounds")`)
	rows := p.eval(`[...document.querySelectorAll(".timeline .text")].map(e => e.innerText.trim())`).([]any)
	for _, r := range rows {
		row := r.(string)
		if (strings.Contains(row, "lead.a-1") && strings.Contains(row, "beta")) || (strings.Contains(row, "lead.b-1") && strings.Contains(row, "alpha")) {
			t.Errorf("a row of one sub-agent's text holds the other's: %q", row)
		}
	}
	if len(rows) != 4 {
		t.Errorf("text rows %q, want one for each piece, as their agents alternate", rows)
	}
}
