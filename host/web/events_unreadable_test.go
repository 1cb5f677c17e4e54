package web

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: the events route served the history of an agent the other
// routes and `cairn events` refuse as unreadable (its snapshot damaged):
// 200 with every line, and the SSE form an "end" event with empty data.
// It answers 500 with the corruption, as GET /api/agents/{id} does, in
// both forms, with nothing of the history.
func TestEventsRouteRefusesAnUnreadableAgent(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("x", approvalAgent, approvalScript)
	f.damageSnapshot("x")

	agent := f.do("/api/agents/x", nil, "")
	want, _ := io.ReadAll(agent.Body)
	if agent.StatusCode != http.StatusInternalServerError || !strings.Contains(string(want), "is corrupt at offset") {
		t.Fatalf("GET /api/agents/x: %d %s; want 500 naming the corruption", agent.StatusCode, want)
	}
	for _, tt := range []struct {
		name   string
		header []string
	}{
		{"JSON Lines", nil},
		{"Server-Sent Events", []string{"Accept", "text/event-stream"}},
	} {
		resp := f.do("/api/agents/x/events", nil, "", tt.header...)
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusInternalServerError || string(got) != string(want) {
			t.Errorf("%s: %d %q; want GET /api/agents/x's 500 %q", tt.name, resp.StatusCode, got, want)
		}
	}
}

// damageSnapshot overwrites 200 bytes of the state in agent id's newest
// snapshot, as a disk's damage would: the agent cannot be read.
func (f *fixture) damageSnapshot(id string) {
	f.t.Helper()
	dir := filepath.Join(f.store.(*checkpoint.FileStore).Dir(), "agents", id)
	snaps, err := filepath.Glob(filepath.Join(dir, "snap-*.cbor"))
	if err != nil || len(snaps) == 0 {
		f.t.Fatalf("snapshots of %s: %v, %v", id, snaps, err)
	}
	snap := snaps[len(snaps)-1]
	data, err := os.ReadFile(snap)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 60; i < min(260, len(data)); i++ { // inside the state frame
		data[i] = 0xaa
	}
	if err := os.WriteFile(snap, data, 0o600); err != nil {
		f.t.Fatal(err)
	}
}
