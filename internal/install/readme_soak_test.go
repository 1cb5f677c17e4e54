package install

import (
	"os/exec"
	"strings"
	"testing"
)

// README's kill -9 soak (`go test ./cmd/cairn -run KillDash -crash-trials
// 200`) is run here as written, in the repository's root, with one trial
// each (a later -crash-trials 1), so that its package, its -run pattern
// and its flag stay what the tests are: a pattern that matched no test
// would pass having run nothing, so the output must name a test that ran.
func TestReadmeSoakCommandRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the kill -9 tests of cmd/cairn once; not in -short")
	}
	var lines []string
	for _, line := range codeLines(t, "../../README.md") {
		if strings.HasPrefix(line, "go test ") && strings.Contains(line, " -crash-trials ") {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		t.Fatal("README shows no kill -9 soak; the reader lost it")
	}
	for _, line := range lines {
		args := append(shellFields(strings.TrimPrefix(line, "go ")), "-crash-trials", "1", "-v", "-count", "1")
		cmd := exec.Command("go", args...)
		cmd.Dir = "../.."
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("README's `%s` ran as go %q: %v\n%s", line, args, err, out)
			continue
		}
		if !strings.Contains(string(out), "--- PASS: TestKillDashNine") {
			t.Errorf("README's `%s` ran as go %q and passed no kill -9 test:\n%s", line, args, out)
		}
	}
}
