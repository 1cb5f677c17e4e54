package web

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// The API shows a tree of agents as `cairn ls` does: the list ordered as
// trees with each agent's depth, a sub-agent naming the agent and call
// that made it, a parent listing its sub-agents; and lineages and
// parents in the API's own lower-case keys.
func TestTreeEndpoints(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("lead", doneAgent, doneScript)
	now := time.Now()
	for _, a := range []struct {
		id, parent string
		depth      int
	}{{"lead.helper-1", "lead", 1}, {"lead.helper-1.deep-1", "lead.helper-1", 2}, {"zz-other", "", 0}} {
		st := checkpoint.NewState(a.id, checkpoint.Definition{Workspace: t.TempDir()}, checkpoint.Labels{}, now)
		if a.parent != "" {
			st.Parent = &checkpoint.Parent{Agent: a.parent, Call: "call_1_0", Name: "helper", Depth: a.depth}
		}
		log, err := f.store.Create(a.id, st)
		if err != nil {
			t.Fatal(err)
		}
		log.Close()
	}
	var list []agentLine
	f.getJSON("/api/agents", &list)
	var got []string
	for _, l := range list {
		got = append(got, l.Agent+":"+string(rune('0'+l.Depth)))
	}
	if strings.Join(got, " ") != "lead:0 lead.helper-1:1 lead.helper-1.deep-1:2 zz-other:0" {
		t.Fatalf("the list as trees: %v", got)
	}
	var v agentView
	f.getJSON("/api/agents/lead", &v)
	if len(v.Children) != 1 || v.Children[0].Agent != "lead.helper-1" || v.Delegated != nil {
		t.Fatalf("the parent: children %+v, delegated by %+v", v.Children, v.Delegated)
	}
	var raw map[string]json.RawMessage
	f.getJSON("/api/agents/lead.helper-1", &raw)
	if string(raw["delegated_by"]) != `{"agent":"lead","call":"call_1_0","name":"helper","depth":1}` {
		t.Fatalf("the sub-agent's delegated_by: %s", raw["delegated_by"])
	}
}
