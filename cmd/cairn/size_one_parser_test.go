package main

import (
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// The command line read sizes with a parser of its own, a near-copy of
// the agent file's that knew only KiB, MiB and GiB: --cache-max 1MB and
// --workspace-limit 10,1GB were refused though an agent file takes such a
// size. Both read sizes with one parser: what one takes, the other does.
func TestSizeFlagsTakeWhatAnAgentFileTakes(t *testing.T) {
	cache := t.TempDir()
	for size, taken := range map[string]bool{
		"1MB": true, "1GB": true, "512KB": true, "4096B": true, "64 MiB": true, "1GiB": true, "0": true,
		"1TB": false, "-1MB": false, "1.5GiB": false, "GiB": false, "ten": false,
	} {
		if _, err := host.ParseSize(size); (err == nil) != taken {
			t.Fatalf("agent file size %q: %v, want taken %v", size, err, taken)
		}
		code, out, errOut := cairn(t, "tools", "gc", "--cache", cache, "--cache-max", size, "--dry-run")
		if taken && code != 0 || !taken && (code != exitUsage || !strings.Contains(errOut, `--cache-max "`+size+`"`)) {
			t.Errorf("--cache-max %q: exit %d, stdout %q, stderr %q; want it taken %v, as an agent file takes it", size, code, out, errOut, taken)
		}
		if size == "0" {
			continue // no bytes: refused as a workspace limit
		}
		code, _, errOut = cairn(t, "run", "--store", t.TempDir(), "--workspace-limit", "10,"+size, "--id", "none", "hi")
		if refused := strings.Contains(errOut, "--workspace-limit"); refused == taken {
			t.Errorf("--workspace-limit 10,%s: exit %d, stderr %q; want it taken %v, as an agent file takes it", size, code, errOut, taken)
		}
	}
}
