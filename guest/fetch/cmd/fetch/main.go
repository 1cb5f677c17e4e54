// Command fetch is the module of cairn's fetch tool. Build it with
// `go generate ./guest/fetch` (from the repository root: `go run
// guest/fetch/gen.go`), which also writes its manifest. It builds as a
// reactor (the fast mode, which is how it is embedded).
package main

import (
	"github.com/cairnrun/cairn/guest"
	"github.com/cairnrun/cairn/guest/fetch/text"
)

func init() { guest.Export(text.Tool()) }

func main() { guest.Main() }
