package host

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Regression: undo read a call's whole kept record into memory, every
// file before and after, and each workspace file whole to see that it
// still held what the round left, so undoing a round that changed a few
// large files made the host hold hundreds of MiB, past what an edge
// device has. Here a round of 8 calls each appends a line to a file of
// 16 MiB: undo streams each file, allocating far less than one of them,
// and puts every file back as it was.
func TestUndoOfLargeFilesStaysSmallInMemory(t *testing.T) {
	const files, size = 8, 16 << 20
	var calls []string
	for i := range files {
		calls = append(calls, fmt.Sprintf("{name: append, input: {path: big%d.bin, line: more}}", i))
	}
	af := agentIn(t, `
name: big
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [append], grant: {workspace: rw}}]
sandbox: {timeout: 1m}
`, "turns:\n  - tool_calls: ["+strings.Join(calls, ", ")+"]\n  - text: done\n")
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	ws := af.WorkspaceDir()
	content := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, size) }
	for i := range files {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("big%d.bin", i)), content(i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eng, _ := fileEngine(t)
	if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "big", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if fi, err := os.Stat(filepath.Join(ws, "big7.bin")); err != nil || fi.Size() != size+5 {
		t.Fatalf("big7.bin after the round: %v, %v", fi, err)
	}

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	u, err := eng.Undo(t.Context(), "big")
	runtime.ReadMemStats(&after)
	if err != nil || len(u.Restored) != files || len(u.Conflicts) != 0 {
		t.Fatalf("undo: %+v, %v", u, err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("undoing %d files of %d MiB allocated %d KiB", files, size>>20, alloc>>10)
	if alloc > 4<<20 {
		t.Errorf("undoing %d files of %d MiB allocated %d MiB, want less than 4 MiB", files, size>>20, alloc>>20)
	}
	for i := range files {
		name := fmt.Sprintf("big%d.bin", i)
		if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || !bytes.Equal(b, content(i)) {
			t.Errorf("%s after undo: %d bytes, %v; want the %d it held", name, len(b), err, size)
		}
	}
	entries, _ := os.ReadDir(ws)
	if len(entries) != files {
		t.Errorf("the workspace holds %d entries after undo, want the %d files", len(entries), files)
	}
}

// Undo streams each file back from where it lies in a kept record, at
// every size where a CBOR head changes its length, from a record file as
// from the directory an earlier version kept; a kept file that is not
// what the path held is refused, leaving the path as it is and nothing
// beside it.
func TestUndoStreamsKeptFilesBack(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		dir := t.TempDir()
		effects, want := keptFiles(t, dir, 0, 1, 23, 24, 255, 256, 65535, 65536, 70000)
		wsDir := filepath.Join(dir, "ws")
		rec := filepath.Join(dir, "rec.cbor")
		must(t, writeKeptRecord(rec, wsDir, filepath.Join(dir, "staging"), effects))
		if legacy {
			rec = filepath.Join(dir, "call_1_0")
			manifest, err := effects.Marshal()
			must(t, err)
			must(t, os.MkdirAll(filepath.Join(rec, "before", "d"), 0o700))
			must(t, os.WriteFile(filepath.Join(rec, "manifest.cbor"), manifest, 0o600))
			for p, w := range want {
				must(t, os.WriteFile(filepath.Join(rec, "before", p), w[0], 0o600))
			}
		}
		for p, w := range want {
			must(t, os.WriteFile(filepath.Join(wsDir, p), w[1], 0o644))
		}
		ws, err := os.OpenRoot(wsDir)
		must(t, err)
		defer ws.Close()
		u := &Undone{}
		if err := undoCall(ws, rec, &pastModes{read: true}, u); err != nil || len(u.Restored) != len(want) || len(u.Conflicts) != 0 {
			t.Fatalf("legacy %v: undo: %+v, %v", legacy, u, err)
		}
		for p, w := range want {
			if b, err := os.ReadFile(filepath.Join(wsDir, p)); err != nil || !bytes.Equal(b, w[0]) {
				t.Errorf("legacy %v: %s after undo: %d bytes, %v; want %d", legacy, p, len(b), err, len(w[0]))
			}
		}

		// A kept file that is not what the path held is refused.
		p := effects[len(effects)-1].Path
		must(t, os.WriteFile(filepath.Join(wsDir, p), want[p][1], 0o644))
		e := effects[len(effects)-1]
		e.Base.Hash[0]++
		err = restore(ws, filepath.FromSlash(p), fileOpener(filepath.Join(wsDir, "d", "f-0.txt")), e.Base, baseMode(e, &pastModes{read: true}))
		if err == nil || !strings.Contains(err.Error(), "the kept content is not what the file held") {
			t.Errorf("restoring content that is not what the file held: %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(wsDir, p)); !bytes.Equal(b, want[p][1]) {
			t.Errorf("%s changed by a refused restore", p)
		}
		if _, err := os.Stat(filepath.Join(wsDir, undoTemp(filepath.FromSlash(p)))); err == nil {
			t.Errorf("a refused restore left %s", undoTemp(p))
		}
	}
}
