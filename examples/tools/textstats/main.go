// Command textstats is the module of the example tool text_stats. Build
// and pack it with `go generate ./examples/tools/textstats`, which builds
// it in the fast mode (-buildmode=c-shared): the host initialises it once
// and starts every call from a snapshot. Built without that flag it is a
// command module, which works the same but initialises the Go runtime in
// every call.
package main

import (
	"github.com/cairnrun/cairn/examples/tools/textstats/stats"
	"github.com/cairnrun/cairn/guest"
)

//go:generate sh -c "cd ../../.. && go run examples/tools/textstats/gen.go"

// A reactor never runs main: init registers the tools it serves.
func init() { guest.Export(stats.Tool()) }

func main() { guest.Main() }
