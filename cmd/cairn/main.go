// Command cairn runs LLM agents whose tools are untrusted WebAssembly
// modules, each call in a fresh sandboxed instance, and brings them back
// after a crash. See the README for a tour; `cairn help` for the commands.
package main

import (
	"os"
	"runtime"

	"github.com/cairnrun/cairn/sandbox"
)

func main() {
	sandbox.ServeCompile()
	sandbox.SetSoftMemoryLimit()
	oneMoreProc()
	survivePipes()
	os.Exit(doMain(os.Args, os.Stdin, dropWhenClosed(os.Stdout), os.Stderr))
}

// oneMoreProc lets the Go runtime run Go code on one more thread than the
// cores it would use by default, unless GOMAXPROCS is set. A goroutine
// waiting in fdatasync holds its P until the runtime's monitor has seen it
// there twice, a good part of each sync on the machines measured; the
// agents a workflow or a delegation runs at once sync every round, so
// with one P per core a core sits idle through much of each sync. One more
// P runs Go code meanwhile (RATIONALE.md, "One more P than cores").
func oneMoreProc() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	}
}
