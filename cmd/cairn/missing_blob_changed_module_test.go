package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: an agent whose module blob a crash kept from the store, and
// whose module file changed since, was refused with "restore the store's
// blobs/ from a backup, or fork a bookmark of the agent or start it over":
// no backup has a blob that was never written, and the remedy that works,
// `cairn resume --upgrade`, was not said. It is said first, with the
// agent's id, and it works. `cairn run --id` of the agent said it with
// AGENT for the id.
func TestMissingBlobOfAChangedModuleSaysUpgrade(t *testing.T) {
	dir := t.TempDir()
	agent, store, cache := moduleAgent(t, dir, false), filepath.Join(dir, "store"), cacheForTests(t)
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cache, "--id", "m", "-f", agent); code != exitDone {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	mod := filepath.Join(dir, "mod.wasm")
	removeModuleBlob(t, store, mod)
	f, err := os.OpenFile(mod, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.Write([]byte{0, 2, 1, 'x'}) // a custom section: another module, as valid
	must(t, err)
	must(t, f.Close())

	for _, args := range [][]string{{"resume", "m"}, {"run", "--id", "m", "again"}} {
		code, _, errOut := cairn(t, append([]string{args[0], "--store", store, "--cache", cache}, args[1:]...)...)
		upgrade, backup := strings.Index(errOut, "(cairn resume --upgrade m)"), strings.Index(errOut, "restore the store's blobs/")
		if code != exitFailed || !strings.Contains(errOut, "holds other bytes now") || upgrade < 0 || backup < upgrade {
			t.Fatalf("%s: exit %d, %q; want %d naming `cairn resume --upgrade m` before a backup", args[0], code, errOut, exitFailed)
		}
	}
	if code, out, errOut := cairn(t, "resume", "--store", store, "--cache", cache, "--upgrade", "m"); code != exitDone {
		t.Fatalf("resume --upgrade, as the error said: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := cairn(t, "run", "--store", store, "--cache", cache, "--id", "m", "once more"); code != exitDone {
		t.Fatalf("run --id after the upgrade: exit %d\n%s%s", code, out, errOut)
	}
}
