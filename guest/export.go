package guest

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/cairnrun/cairn/abi"
)

// exported are the tools Export registered for the fast mode.
var exported struct {
	mu    sync.Mutex
	tools []Tool
}

// Export registers the tools that the module's fast entry point,
// abi.CallExport, serves. A tool that builds in the fast mode (as a WASI
// reactor, with -buildmode=c-shared) calls it from an init function,
// because a reactor never runs main; the same source still builds as a
// command, where main calls Main:
//
//	func init() { guest.Export(tools...) }
//	func main() { guest.Main() }
//
// The host initialises a reactor once, snapshots it, and starts every call
// from that snapshot, so package state set up in init is shared by every
// call as it was when init returned, and state a call changes is never seen
// by another call.
func Export(tools ...Tool) {
	exported.mu.Lock()
	exported.tools = append([]Tool(nil), tools...)
	exported.mu.Unlock()
	if reactor() {
		warmUp(tools)
	}
}

// reactor reports whether the module was built as a reactor: the fast
// mode.
func reactor() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-buildmode" {
			return s.Value == "c-shared"
		}
	}
	return false
}

// warmUp does, once, at initialisation, the work that the first call of
// a process does and no later one: decoding a tool's input builds caches
// of its types (reflection, in the JSON decoder). In the fast mode every
// call starts from the snapshot taken after initialisation, so without
// this every call would build them again. It then collects the garbage,
// so that the snapshot holds a compact heap and a call starts far from the
// next collection. The caches hold types, never a call's data.
func warmUp(tools []Tool) {
	for _, t := range tools {
		if t.warm != nil {
			t.warm()
		}
	}
	runtime.GC()
}

func exportedTools() []Tool {
	exported.mu.Lock()
	defer exported.mu.Unlock()
	return exported.tools
}

// serveArgs is one call of a module: with the argument --cairn-manifest it
// writes the manifest of tools to w, otherwise it serves one request from
// r. It returns the exit code of the command mode.
func serveArgs(args []string, r io.Reader, w io.Writer, tools []Tool) int {
	if len(args) > 1 && args[1] == abi.ManifestFlag {
		b, err := abi.Marshal(ManifestOf(tools...))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := w.Write(b); err != nil {
			fmt.Fprintln(os.Stderr, "write manifest:", err)
			return 1
		}
		return 0
	}
	return Serve(r, w, tools...)
}
