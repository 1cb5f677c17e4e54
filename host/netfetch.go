package host

import (
	"github.com/cairnrun/cairn/guest/builtin"
	"github.com/cairnrun/cairn/guest/fetch"
)

// FetchModule is the ToolRef.Module name of the fetch tool (a URL to
// readable text), embedded like the built-in tools but a module of its
// own: it needs a net grant, and an agent that does not name it never
// compiles it.
const FetchModule = "fetch"

// embeddedWasm is the module an embedded name stands for: BuiltinModule
// or FetchModule.
func embeddedWasm(name string) ([]byte, bool) {
	switch name {
	case BuiltinModule:
		return builtin.Module, true
	case FetchModule:
		return fetch.Module(), true
	}
	return nil, false
}

// EmbeddedModule reports whether name, as a tool entry's module: gives
// it, names a module built into cairn (BuiltinModule, FetchModule) rather
// than a .wasm file.
func EmbeddedModule(name string) bool {
	_, ok := embeddedWasm(name)
	return ok
}
