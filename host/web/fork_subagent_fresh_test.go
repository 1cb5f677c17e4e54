package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// A fork of a sub-agent, made through the API, is an agent of its own:
// the agent list shows it at the top of a tree of its own, and starting the sub-agent's parent over (cairn run --fresh) removes the
// sub-agents its delegations made, not the fork, which it once removed
// with them, as it keeps the sub-agent's record of the call that made it.
func TestForkOfASubAgentOutlivesItsParentStartedOver(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	af := f.runLeadDelegatingToAlpha()
	kids, err := host.Children(context.Background(), f.store, "lead")
	if err != nil || len(kids) != 1 {
		t.Fatalf("the lead's sub-agents: %v, %v", kids, err)
	}
	sub := kids[0].ID
	f.decode(f.post("/api/agents/"+sub+"/fork", map[string]string{"as": "mine"}), http.StatusCreated, nil)
	// The agent list shows the fork at the top, under no agent: it was
	// once listed under the sub-agent's parent.
	var list []agentLine
	f.getJSON("/api/agents", &list)
	for _, l := range list {
		if l.Agent == "mine" && (l.Parent != "" || l.Depth != 0) {
			t.Fatalf("the agent list has the fork under %q at depth %d", l.Parent, l.Depth)
		}
	}

	res, err := f.eng.Run(context.Background(), host.RunOptions{Agent: af, ID: "lead", Prompt: "again", Fresh: true})
	if err != nil || res.Status != host.StatusDone {
		t.Fatalf("the lead started over: %+v, %v", res, err)
	}
	if !f.store.Exists("mine") {
		t.Fatal("the fork of the lead's sub-agent was removed when the lead started over")
	}
	var line agentView
	f.getJSON("/api/agents/mine", &line)
	if line.Lineage == nil || line.Lineage.Agent != sub || !strings.HasPrefix(sub, "lead.alpha-") {
		t.Fatalf("the fork's lineage: %+v", line.Lineage)
	}
}
