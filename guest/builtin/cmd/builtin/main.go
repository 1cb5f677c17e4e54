// Command builtin is cairn's built-in tools built in Go from their
// reference definitions (../../tools): the module the C module that is
// embedded (../../c) is tested and measured against. It builds as a
// reactor (the fast mode) and as a command.
package main

import (
	"github.com/cairnrun/cairn/guest"
	"github.com/cairnrun/cairn/guest/builtin/tools"
)

func init() { guest.Export(tools.All()...) }

func main() { guest.Main() }
