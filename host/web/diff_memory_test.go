package web

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// Regression: GET /diff read the whole of every file a round changed,
// before and after, into memory before it bounded its answer, so a
// round that rewrote 40 files of 4 MiB (160 MiB; a call may stage up to
// its staging limit, 256 MiB by default) made cairn serve allocate all
// of them for one request, which the page makes at every round's end.
// A diff request now takes memory for what its answer can show: a file
// larger than 1 MiB is not read, and is said to be too large to
// show, from the changes this node kept as from the store's pasts.
func TestDiffOfBigFilesTakesLittleMemory(t *testing.T) {
	const files, size = 40, 4 << 20
	dir := t.TempDir()
	store, err := host.OpenStore(dir)
	must(t, err)
	f := newFixtureOn(t, Config{Loopback: true}, store)
	ws := filepath.Join(f.agents, "big", "workspace")
	must(t, os.MkdirAll(ws, 0o755))
	text := strings.Repeat(strings.Repeat("x", 63)+"\n", size/64)
	var script strings.Builder
	script.WriteString("turns:\n  - tool_calls:\n")
	for i := range files {
		must(t, os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%02d.txt", i)), []byte(text), 0o644))
		fmt.Fprintf(&script, "      - {name: write_file, input: {path: f%02d.txt, content: short}}\n", i)
	}
	script.WriteString("  - text: done\n")
	f.run("big", doneAgent, script.String())
	text = ""

	diffOf := func(from string) {
		t.Helper()
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		resp := f.do("/api/agents/big/diff", nil, "")
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		runtime.ReadMemStats(&m1)
		must(t, err)
		alloc := m1.TotalAlloc - m0.TotalAlloc
		t.Logf("diff from %s: %d bytes answered, %d KiB allocated", from, len(body), alloc>>10)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /diff from %s: %d %s", from, resp.StatusCode, body)
		}
		if alloc > files*size/16 {
			t.Fatalf("GET /diff from %s of a round that changed %d files of %d MiB allocated %d MiB; want far less than the %d MiB they hold",
				from, files, size>>20, alloc>>20, files*size>>20)
		}
		var diff struct {
			Round   int `json:"round"`
			Changes []struct {
				change
				TooLarge bool `json:"too_large"`
			} `json:"changes"`
		}
		must(t, json.Unmarshal(body, &diff))
		if diff.Round != 1 || len(diff.Changes) != files {
			t.Fatalf("diff from %s: round %d, %d changes; want round 1 and %d", from, diff.Round, len(diff.Changes), files)
		}
		for _, c := range diff.Changes {
			if !c.TooLarge || c.BeforeSize != size || c.AfterSize != int64(len("short")) || c.Binary || len(c.Lines) != 0 {
				t.Fatalf("change %s from %s: %+v; want it too large to show, with its sizes and no lines", c.Path, from, c)
			}
		}
	}
	diffOf("the kept changes")

	// The same round from the store's pasts, as on a node that did not
	// run it.
	var kept []string
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "changes" {
			kept = append(kept, p)
		}
		return err
	}))
	if len(kept) != 1 {
		t.Fatalf("kept changes at %v; want one directory", kept)
	}
	must(t, os.RemoveAll(kept[0]))
	diffOf("the store's pasts")
}
