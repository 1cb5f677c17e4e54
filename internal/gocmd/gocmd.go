// Package gocmd is for tests: it runs the go command as a user of the
// module would, in a directory of the test's, outside any Go workspace
// (GOWORK=off) and without the GOFLAGS the tests run with, and fails the
// test, with what the command printed, when the command fails.
package gocmd

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Run runs `go args...` in dir, with env added to the environment, and
// returns what it printed.
func Run(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS="}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
