package web

import "testing"

// The agent list shows the first page of a store of more than 500
// agents, and the rest when "more agents" is clicked; an agent's page its
// first 500 sub-agents, and the rest when "more sub-agents" is.
func TestBrowserShowsMoreAgents(t *testing.T) {
	needsBrowser(t)
	f := newFixture(t, Config{Loopback: true})
	storeTree(t, f.store, 3, 520)
	p := openPage(t, f.http.URL+"/")
	p.waitFor("the first 500 agents", `document.querySelectorAll('tr[data-agent]').length === 500`)
	p.click("button.more")
	p.waitFor("all 523 agents", `document.querySelectorAll('tr[data-agent]').length === 523 && !document.querySelector('button.more')`)
	p.eval(`location.hash = "#/agent/t001"`)
	p.waitFor("the first 500 sub-agents", `document.querySelectorAll('[data-child]').length === 500`)
	p.click("button.more")
	p.waitFor("all 520 sub-agents", `document.querySelectorAll('[data-child]').length === 520 && !document.querySelector('button.more')`)
}
