package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moduleAgent writes, in dir, an agent file whose tools are write_file
// and the example's text_stats from a module file of its own, mod.wasm,
// with a script that asks for both once and then says it is done; with
// ask, write_file waits for approval. It returns the agent file.
func moduleAgent(t *testing.T, dir string, ask bool) string {
	t.Helper()
	copyFile(t, "../../examples/tools/textstats/textstats.wasm", filepath.Join(dir, "mod.wasm"))
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "workspace", "notes.md"), []byte("some words, some more words\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("turns:\n"+
		"  - tool_calls: [{name: text_stats, input: {path: notes.md}}, {name: write_file, input: {path: out.txt, content: hi}}]\n"+
		"  - text: done\n"), 0o644))
	agent := "name: mod\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\n" +
		"tools: [{module: builtin, only: [write_file]}, {module: mod.wasm, grant: {workspace: ro}}]\n"
	if ask {
		agent += "approvals: [{tool: write_file, action: ask}]\n"
	}
	file := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(file, []byte(agent), 0o644))
	return file
}

// removeModuleBlob removes from the store the blob of the module file
// holds, as a crash before a new agent's modules were written in the
// background leaves its store (host/blobs_later.go).
func removeModuleBlob(t *testing.T, store, file string) {
	t.Helper()
	wasm, err := os.ReadFile(file)
	must(t, err)
	sum := sha256.Sum256(wasm)
	must(t, os.Remove(filepath.Join(store, "blobs", "sha256", hex.EncodeToString(sum[:]))))
}

// Regression: `cairn resume --strategy manual` of an agent whose module
// blob a crash kept from the store (killed before its first commit)
// wrote the blob while rebuilding the agent, where manual "reports and
// changes nothing". The store is byte for byte as it was (but the lock
// file, which any resume takes); so after `cairn ask`, a read-only side
// question; and the agent then resumes.
func TestManualResumeWritesNothing(t *testing.T) {
	dir := t.TempDir()
	agent, store, cache := moduleAgent(t, dir, true), filepath.Join(dir, "store"), cacheForTests(t)
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cache, "--id", "m", "-f", agent); code != exitApproval {
		t.Fatalf("run: exit %d, want %d (awaiting approval)\n%s", code, exitApproval, errOut)
	}
	removeModuleBlob(t, store, filepath.Join(dir, "mod.wasm"))
	before := dirBytes(t, store)

	if code, out, errOut := cairn(t, "resume", "--store", store, "--cache", cache, "--strategy", "manual", "m"); code != exitApproval && code != exitPaused {
		t.Fatalf("resume --strategy manual: exit %d\n%s%s", code, out, errOut)
	}
	if dirBytes(t, store) != before {
		t.Fatal("resume --strategy manual changed the store")
	}
	// With --upgrade, manual would have stored the agent file anew: the
	// two are refused together.
	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cache, "--strategy", "manual", "--upgrade", "m"); code != exitUsage ||
		!strings.Contains(errOut, "give one of them") {
		t.Fatalf("resume --strategy manual --upgrade: exit %d, %q; want %d refusing the pair", code, errOut, exitUsage)
	}
	if dirBytes(t, store) != before {
		t.Fatal("resume --strategy manual --upgrade changed the store")
	}
	if code, out, errOut := cairn(t, "ask", "--store", store, "--cache", cache, "m", "What did you find?"); code != exitDone {
		t.Fatalf("ask: exit %d\n%s%s", code, out, errOut)
	}
	if dirBytes(t, store) != before {
		t.Fatal("ask changed the store")
	}
	if code, out, errOut := cairn(t, "resume", "--store", store, "--cache", cache, "--auto-deny", "m"); code != exitDone {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
}
