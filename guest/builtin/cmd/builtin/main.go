// Command builtin is the module of cairn's built-in tools. Build it with
// `go generate ./guest/builtin`, which also writes its manifest.
package main

import (
	"cairn/guest"
	"cairn/guest/builtin/tools"
)

func main() { guest.Main(tools.All()...) }
