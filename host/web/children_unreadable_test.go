package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Regression: GET /children of an agent that cannot be read (its
// snapshot damaged) answered 200 and an empty list, where every other
// route of the agent answers 500 with the damage: it looked up only
// whether the agent exists. It is refused as GET /api/agents/{id} is,
// with the same answer.
func TestChildrenOfAnUnreadableAgentIsRefused(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("x", approvalAgent, approvalScript)
	f.damageSnapshot("x")
	agent := f.do("/api/agents/x", nil, "")
	want, _ := io.ReadAll(agent.Body)
	if agent.StatusCode != http.StatusInternalServerError || !strings.Contains(string(want), "is corrupt at offset") {
		t.Fatalf("GET /api/agents/x: %d %s; want 500 naming the corruption", agent.StatusCode, want)
	}
	resp := f.do("/api/agents/x/children", nil, "")
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusInternalServerError || string(got) != string(want) {
		t.Fatalf("GET /api/agents/x/children: %d %s; want GET /api/agents/x's 500 %s", resp.StatusCode, got, want)
	}
}
