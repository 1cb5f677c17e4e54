// Command builtin is the module of cairn's built-in tools. Build it with
// `go generate ./guest/builtin`, which also writes its manifest. It builds
// as a reactor (the fast mode, which is how it is embedded) and as a
// command.
package main

import (
	"github.com/cairnrun/cairn/guest"
	"github.com/cairnrun/cairn/guest/builtin/tools"
)

func init() { guest.Export(tools.All()...) }

func main() { guest.Main() }
