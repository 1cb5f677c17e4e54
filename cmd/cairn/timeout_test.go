package main

import (
	"flag"
	"os"
	"testing"
	"time"
)

// goTestDefaultTimeout is what `go test` gives a test binary as
// -test.timeout when its command line sets none.
const goTestDefaultTimeout = 10 * time.Minute

// packageTimeout is this package's own default instead. Its crash tests
// kill real processes at many points and resume each (TestKilled*,
// TestKillDashNine*, TestTwoNodes*): about four minutes on an idle 2-core
// machine, mostly waiting on those processes, and past ten when the
// machine is busy with other work. A timeout given on the command line
// is kept.
const packageTimeout = 30 * time.Minute

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.timeout"); f != nil && f.Value.String() == goTestDefaultTimeout.String() {
		f.Value.Set(packageTimeout.String())
	}
	os.Exit(m.Run())
}
