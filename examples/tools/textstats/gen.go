//go:build ignore

// gen builds textstats.wasm in the fast mode; `go run gen.go -check`
// verifies it instead.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cairnrun/cairn/examples/tools/textstats/stats"
	"github.com/cairnrun/cairn/guest"
	"github.com/cairnrun/cairn/guest/pack"
)

func main() {
	check := flag.Bool("check", false, "verify textstats.wasm instead of writing it")
	flag.Parse()
	if err := pack.BuildReactor("github.com/cairnrun/cairn/examples/tools/textstats", "examples/tools/textstats/textstats.wasm",
		guest.ManifestOf(stats.Tool()), *check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
