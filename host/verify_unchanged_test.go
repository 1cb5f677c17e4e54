package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A call that writes a file with the content it already had changes
// nothing, yet what it did turned on that content: the recording names
// the file as it was, and verify finds the call's replay the same. It
// once replayed it on a workspace without the file, where the write was
// a change, and reported a divergence: running the README's example a
// second time, over the REPORT.md of the first, then `cairn verify`
// failed.
func TestVerifyAWriteThatChangedNothing(t *testing.T) {
	for _, record := range []string{"digests", "reads"} {
		t.Run(record, func(t *testing.T) {
			af := agentIn(t, `
name: audited
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
record: `+record+`
`, `
turns:
  - tool_calls: [{name: write_file, input: {path: same.txt, content: "as it was\n"}}]
  - text: done
`)
			if err := os.WriteFile(filepath.Join(af.Dir, "workspace", "same.txt"), []byte("as it was\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			eng, _ := fileEngine(t)
			res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "audited", Prompt: "go"})
			if err != nil || res.Status != StatusDone {
				t.Fatalf("run: %+v %v", res, err)
			}
			rep := verify(t, eng, VerifyOptions{})
			if len(rep.Calls) != 1 || rep.Calls[0].Status != VerifyMatch {
				t.Fatalf("verify of a write that changed nothing: %+v", rep.Calls)
			}
		})
	}
}
