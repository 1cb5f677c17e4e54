package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// cairn verify passes on the example's honest run (exit 0, a match per
// call, --json one report), and exits 6 naming the call, the module and
// what differed once the example tool's module is changed in the store.
func TestVerifyCommand(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "audited"}, args...)...); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	code, out, errOut := cairn(t, "verify", "--store", store, "audited")
	if code != exitDone || !strings.Contains(out, "5 calls: 5 match, 0 diverged") {
		t.Fatalf("honest run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = cairn(t, "verify", "--store", store, "--json", "--round", "2", "audited")
	var rep host.VerifyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitDone || len(rep.Calls) != 2 {
		t.Fatalf("--json --round 2: exit %d, %v: %s", code, err, out)
	}
	stats := rep.Calls[1]
	if stats.Tool != "text_stats" {
		t.Fatalf("round 2's second call is %s", stats.Tool)
	}
	blob := filepath.Join(store, "blobs", "sha256", strings.TrimPrefix(stats.Module, "sha256:"))
	wasm, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	wasm[len(wasm)-1] ^= 1
	if err := os.WriteFile(blob, wasm, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cairn(t, "verify", "--store", store, "--call", stats.Call, "audited")
	if code != exitDiverged || !strings.Contains(out, "text_stats  diverged") ||
		!strings.Contains(out, "module: the module's bytes in the store changed") || !strings.Contains(errOut, "1 of 1 call of") {
		t.Fatalf("changed module: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut = cairn(t, "verify", "--store", store, "--round", "9", "audited"); code != exitUsage {
		t.Fatalf("--round 9: exit %d: %s", code, errOut)
	}
}
