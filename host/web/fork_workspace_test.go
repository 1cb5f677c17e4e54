package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// A fork whose workspace directory (beside the original's, named after
// the new agent) exists and holds files is 409, the agent's state not
// allowing it, with the message that names the directory; it was once
// 500. Nothing is written there and no agent is made.
func TestForkIntoNonEmptyWorkspaceIs409(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	af, _ := f.run("w", doneAgent, doneScript)
	taken := af.WorkspaceDir() + "-w2"
	must(t, os.MkdirAll(taken, 0o755))
	must(t, os.WriteFile(filepath.Join(taken, "mine.txt"), []byte("keep"), 0o644))
	var e apiError
	f.decode(f.post("/api/agents/w/fork", map[string]string{"as": "w2"}), http.StatusConflict, &e)
	if !strings.Contains(e.Error, taken) || !strings.Contains(e.Error, "exists and is not empty") {
		t.Fatalf("fork into %s: %q, want it to name the directory", taken, e.Error)
	}
	if entries, _ := os.ReadDir(taken); len(entries) != 1 {
		t.Fatalf("the fork wrote into %s: %v", taken, entries)
	}
	f.decode(f.do("/api/agents/w2", nil, ""), http.StatusNotFound, nil)
	if _, err := host.Inspect(t.Context(), f.store, "w2"); err == nil {
		t.Fatal("the refused fork made an agent")
	}
}
