package workflow

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzParse feeds Parse bytes a workflow file may hold: it never panics,
// refuses with a message, and a flow it accepts names steps that are all
// there, in an order that runs each after what it needs.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("..", "..", "examples", "workflow", "flow.yaml")); err == nil {
		f.Add(data)
	}
	f.Add([]byte("name: w\nsteps:\n  - {name: a, agent: a.yaml, prompt: go}\n  - {name: b, agent: a.yaml, needs: [a], prompt: \"{{steps.a.output}}\"}\n"))
	f.Add([]byte("name: w\nsteps:\n  - {name: a, agent: a.yaml, needs: [b]}\n  - {name: b, agent: a.yaml, needs: [a]}\n"))
	f.Add([]byte("name: w\nsteps: []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		flow, err := Parse(data, "/workflows")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a refusal with no message")
			}
			return
		}
		if flow.Name == "" || len(flow.Steps) == 0 {
			t.Fatalf("accepted a flow with no name or no steps: %+v", flow)
		}
		// Every step can run: take, again and again, the steps whose
		// needs are all done; a need that is no step, or a cycle, stalls.
		done := map[string]bool{}
		for progress := true; progress; {
			progress = false
			for _, s := range flow.Steps {
				if !done[s.Name] && !slices.ContainsFunc(s.Needs, func(n string) bool { return !done[n] }) {
					done[s.Name], progress = true, true
				}
			}
		}
		if len(done) != len(flow.Steps) {
			t.Fatalf("accepted steps that can never all run (%d of %d can): %+v", len(done), len(flow.Steps), flow.Steps)
		}
	})
}
