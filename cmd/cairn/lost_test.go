package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// frameEnds are the offsets where the frames of a journal end, read from
// their length fields (the layout is in checkpoint's package doc), up to
// the reserved zeros after the last.
func frameEnds(data []byte) []int {
	var ends []int
	for off := 0; off+9 <= len(data); {
		n := int(binary.LittleEndian.Uint32(data[off:]))
		if n == 0 || off+9+n > len(data) {
			break
		}
		off += 9 + n
		ends = append(ends, off)
	}
	return ends
}

// Regression: a journal cut at a frame boundary loaded as an older
// boundary, and resume ran committed rounds again over a workspace that
// had their changes (doubled edits), or failed telling the user to run
// resume again. Cut at every frame boundary, cairn resume refuses, says
// what is missing and what to do, and leaves the workspace and the store
// byte for byte as they were; so does a deleted newest snapshot.
func TestResumeRefusesLostCommittedData(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "log.txt"), []byte("start\n"), 0o644))
	var script strings.Builder
	script.WriteString("turns:\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&script, "  - tool_calls: [{name: write_file, input: {path: r%d.txt, content: round %d}}]\n", i, i)
	}
	script.WriteString("  - text: finished\n")
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script.String()), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte("name: cut\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\n"+
		"tools: [{module: builtin}]\nlimits: {max_rounds: 4}\n"), 0o644))
	store := filepath.Join(dir, "store")
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "cut", "-f", agent, "go"); code != exitPaused {
		t.Fatalf("run: exit %d, want paused\n%s", code, errOut)
	}
	agentDir := filepath.Join(store, "agents", "cut")
	journals, _ := filepath.Glob(filepath.Join(agentDir, "journal-*.log"))
	sort.Strings(journals)
	journal := journals[len(journals)-1]
	data, err := os.ReadFile(journal)
	must(t, err)
	ends := frameEnds(data)
	full := ends[len(ends)-1]
	for _, cut := range append([]int{0}, ends[:len(ends)-1]...) {
		must(t, os.WriteFile(journal, data[:cut], 0o600))
		storeBefore, wsBefore := dirBytes(t, agentDir), dirBytes(t, ws)
		code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "cut")
		if code != exitFailed || !strings.Contains(errOut, "lost committed data") || !strings.Contains(errOut, filepath.Base(journal)) {
			t.Fatalf("cut at %d of %d: exit %d, want %d and an error naming the journal\n%s", cut, full, code, exitFailed, errOut)
		}
		if strings.Contains(errOut, "`cairn resume") {
			t.Fatalf("cut at %d: the error tells the user to resume again, which cannot work:\n%s", cut, errOut)
		}
		if dirBytes(t, agentDir) != storeBefore || dirBytes(t, ws) != wsBefore {
			t.Fatalf("cut at %d: a refused resume changed the store or the workspace", cut)
		}
	}
	t.Logf("%d cuts of %s refused", len(ends), filepath.Base(journal))
	must(t, os.WriteFile(journal, data[:full], 0o600))

	// The newest snapshot deleted: the same refusal, naming it.
	snap := strings.Replace(strings.Replace(journal, "journal-", "snap-", 1), ".log", ".cbor", 1)
	snapData, err := os.ReadFile(snap)
	must(t, err)
	must(t, os.Remove(snap))
	storeBefore, wsBefore := dirBytes(t, agentDir), dirBytes(t, ws)
	code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "cut")
	if code != exitFailed || !strings.Contains(errOut, filepath.Base(snap)+" is missing") {
		t.Fatalf("newest snapshot deleted: exit %d, want %d and an error naming it\n%s", code, exitFailed, errOut)
	}
	if dirBytes(t, agentDir) != storeBefore || dirBytes(t, ws) != wsBefore {
		t.Fatal("a refused resume changed the store or the workspace")
	}
	// Nor does a new run of the same id start over on what is left.
	code, _, errOut = cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "cut", "-f", agent, "go")
	if code != exitFailed || !strings.Contains(errOut, filepath.Base(snap)+" is missing") {
		t.Fatalf("run of the id whose snapshot is gone: exit %d, want %d and an error naming it\n%s", code, exitFailed, errOut)
	}
	if dirBytes(t, agentDir) != storeBefore || dirBytes(t, ws) != wsBefore {
		t.Fatal("a refused run changed the store or the workspace")
	}
	must(t, os.WriteFile(snap, snapData, 0o600))
	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "--max-rounds", "10", "cut"); code != exitDone {
		t.Fatalf("resume of the whole journal: exit %d\n%s", code, errOut)
	}
}
