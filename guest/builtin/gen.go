//go:build ignore

// gen builds builtin.wasm from ./cmd/builtin, in the fast mode. Run it with
// `go generate ./guest/builtin`; `go run gen.go -check` verifies the
// committed module instead.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cairnrun/cairn/guest"
	"github.com/cairnrun/cairn/guest/builtin/tools"
	"github.com/cairnrun/cairn/guest/pack"
)

func main() {
	check := flag.Bool("check", false, "verify builtin.wasm instead of writing it")
	flag.Parse()
	if err := pack.BuildReactor("github.com/cairnrun/cairn/guest/builtin/cmd/builtin", "guest/builtin/builtin.wasm",
		guest.ManifestOf(tools.All()...), *check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
