//go:build ignore

// gen builds fetch.wasm from ./cmd/fetch, in the fast mode: run it from the
// repository root as `go run guest/fetch/gen.go`; `-check` verifies the
// committed module instead.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cairnrun/cairn/guest"
	"github.com/cairnrun/cairn/guest/fetch/text"
	"github.com/cairnrun/cairn/guest/pack"
)

func main() {
	check := flag.Bool("check", false, "verify fetch.wasm instead of writing it")
	flag.Parse()
	if err := pack.BuildReactor("github.com/cairnrun/cairn/guest/fetch/cmd/fetch", "guest/fetch/fetch.wasm",
		guest.ManifestOf(text.Tool()), *check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
