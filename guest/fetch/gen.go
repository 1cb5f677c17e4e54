//go:build ignore

// gen builds fetch.wasm.gz from ./cmd/fetch, in the fast mode, and
// compresses it: run it from the repository root as
// `go run guest/fetch/gen.go`; `-check` verifies the committed module
// instead.
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairnrun/cairn/guest"
	"github.com/cairnrun/cairn/guest/fetch/text"
	"github.com/cairnrun/cairn/guest/pack"
)

const out = "guest/fetch/fetch.wasm.gz"

func main() {
	check := flag.Bool("check", false, "verify "+out+" instead of writing it")
	flag.Parse()
	if err := gen(*check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func gen(check bool) error {
	tmp, err := os.MkdirTemp("", "cairn-fetch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	wasm := filepath.Join(tmp, "fetch.wasm")
	if err := pack.BuildReactor("github.com/cairnrun/cairn/guest/fetch/cmd/fetch", wasm,
		guest.ManifestOf(text.Tool()), false); err != nil {
		return err
	}
	b, err := os.ReadFile(wasm)
	if err != nil {
		return err
	}
	// No name and no time in the header, the best compression: the same
	// module always gives the same bytes.
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if !check {
		return os.WriteFile(out, buf.Bytes(), 0o644)
	}
	committed, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	if !bytes.Equal(committed, buf.Bytes()) {
		return fmt.Errorf("%s is not what the repository builds (%d bytes committed, %d built): run go generate and commit it", out, len(committed), buf.Len())
	}
	return nil
}
