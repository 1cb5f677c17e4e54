package sandbox

import (
	"strings"
	"testing"
)

// Regression: the environment was given to the module in Go's map order,
// another at every call, so a tool that printed or hashed its
// environment answered differently each time under the same policy,
// though everything else it sees is deterministic unless granted. It is
// given sorted by name.
func TestEnvironmentIsInTheSameOrderEveryCall(t *testing.T) {
	env := map[string]string{"A": "1", "B": "2", "C": "3", "D": "4", "E": "5", "F": "6", "G": "7", "H": "8"}
	want := "A=1\nB=2\nC=3\nD=4\nE=5\nF=6\nG=7\nH=8"
	for i := range 8 {
		ex, out, errOut, err := run(t, Policy{Args: []string{"env"}, Env: env})
		if err != nil || ex.Code != 0 {
			t.Fatalf("run: %v, exit %d: %s", err, ex.Code, errOut)
		}
		if got := strings.TrimSpace(out); got != want {
			t.Fatalf("call %d: environment %q, want %q", i, got, want)
		}
	}
}
