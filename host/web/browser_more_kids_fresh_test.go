package web

import (
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: an agent's page that showed more than its first page of
// sub-agents ("more sub-agents") read the pages past the first only when
// the agent itself changed: its answer, which holds the first page, was
// 304 while that page stayed as it was, so a sub-agent made, or one whose
// status changed, past the first 500 was never shown. The pages shown
// past the first are read again at each look.
func TestBrowserShowsNewSubAgentsPastTheFirstPage(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{Loopback: true})
	storeTree(t, f.store, 3, 510)
	p := openPage(t, f.http.URL+"/#/agent/t001")
	p.waitFor("the first 500 sub-agents", `document.querySelectorAll('[data-child]').length === 500`)
	p.click("button.more")
	p.waitFor("all 510 sub-agents", `document.querySelectorAll('[data-child]').length === 510`)
	lock, err := f.store.Lock("t001.k999", checkpoint.ThisProcess("test"))
	must(t, err)
	st := checkpoint.NewState("t001.k999", checkpoint.Definition{Workspace: t.TempDir()}, checkpoint.Labels{}, time.Now())
	st.Status, st.Parent = checkpoint.StatusDone, &checkpoint.Parent{Agent: "t001", Call: "call_1_0", Name: "k", Depth: 1}
	log, err := f.store.Create("t001.k999", st)
	must(t, err)
	must(t, log.Close())
	lock.Unlock()
	p.waitFor("the sub-agent made since, on the second page", `document.querySelector('[data-child="t001.k999"]') !== null`)
}
