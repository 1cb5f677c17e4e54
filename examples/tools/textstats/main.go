// Command textstats is the module of the example tool text_stats. Build
// and pack it with `go generate ./examples/tools/textstats`.
package main

import (
	"cairn/examples/tools/textstats/stats"
	"cairn/guest"
)

//go:generate sh -c "cd ../../.. && go run examples/tools/textstats/gen.go"

func main() { guest.Main(stats.Tool()) }
