package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// Regression: a TestMain raised this package's -test.timeout from go
// test's ten minutes to thirty, and README said so; but the go command
// kills a test binary one minute after the -timeout it gave it, whatever
// the binary does, so the package still got eleven minutes, and lost the
// goroutine dump its own timeout prints. The timeout is the go command's:
// `go test -timeout 30m ./...` gives a slow machine longer (README,
// "Tests"), and the test binary keeps the one it is given.
func TestTimeoutIsTheGoCommands(t *testing.T) {
	got := flag.Lookup("test.timeout").Value.String()
	for _, arg := range os.Args[1:] {
		if given, ok := strings.CutPrefix(arg, "-test.timeout="); ok {
			if given != got {
				t.Fatalf("the go command gave -test.timeout=%s and the test binary runs with %s", given, got)
			}
			return
		}
	}
	t.Skip("run without -test.timeout on the command line")
}
