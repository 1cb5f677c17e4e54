package host

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// treeHash hashes every file under dir, names and contents.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		fmt.Fprintf(h, "%s %d %x\n", p, len(b), sha256.Sum256(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// A side question goes to the agent's model with the whole history and
// the question, and changes nothing in the store.
func TestAskChangesNothing(t *testing.T) {
	srv := openAIServer(t)
	agent := fmt.Sprintf(`
name: remote
model: {provider: openai, name: m, base_url: %s/v1}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
`, srv.URL)
	eng, store := fileEngine(t)
	res, err := eng.Run(context.Background(), RunOptions{Agent: agentIn(t, agent, ""), ID: "q", Prompt: "look"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	dir := store.(*checkpoint.FileStore).Dir()
	before := treeHash(t, dir)
	var streamed strings.Builder
	a, err := eng.Ask(context.Background(), AskOptions{ID: "q", Question: "what did you find?",
		OnText: func(s string) { streamed.WriteString(s) }})
	if err != nil || a.Text != "The workspace is empty." || streamed.String() != a.Text || a.Usage.Total() != 16 {
		t.Fatalf("ask: %+v, %v (streamed %q)", a, err, streamed.String())
	}
	if body := srv.last.Load().(string); !strings.Contains(body, `"content":"what did you find?"`) || !strings.Contains(body, `"tool_call_id"`) {
		t.Fatalf("the question was sent without the history or itself: %s", body)
	}
	if after := treeHash(t, dir); after != before {
		t.Fatal("ask changed the store")
	}
	if _, err := eng.Ask(context.Background(), AskOptions{ID: "nobody", Question: "?"}); err == nil {
		t.Fatal("ask of an unknown agent succeeded")
	}
}
