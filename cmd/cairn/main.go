// Command cairn runs LLM agents whose tools are untrusted WebAssembly
// modules, each call in a fresh sandboxed instance, and brings them back
// after a crash. See the README for a tour; `cairn help` for the commands.
package main

import (
	"os"

	"github.com/cairnrun/cairn/sandbox"
)

func main() {
	sandbox.ServeCompile()
	os.Exit(doMain(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
