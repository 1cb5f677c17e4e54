// Command mcptools is a tool module for the MCP server's tests: a tool
// that answers with JSON, and one that writes a file and then runs until
// it is stopped, so that a test can cancel it or kill the server while
// its change is staged.
package main

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest"
)

type countIn struct {
	Text string `json:"text" desc:"the text to count"`
}

type writeIn struct {
	Path    string `json:"path" desc:"a file in the workspace"`
	Content string `json:"content" desc:"what to write"`
}

func main() {
	guest.Main(
		guest.Define("count", "Counts the words and bytes of a text, as JSON.", func(c *guest.Call, in countIn) (string, error) {
			b, err := json.Marshal(map[string]int{"words": len(strings.Fields(in.Text)), "bytes": len(in.Text)})
			return string(b), err
		}, guest.Idempotent()),
		guest.Define("write_and_wait", "Writes a file, then runs until it is stopped.", func(c *guest.Call, in writeIn) (string, error) {
			if err := os.WriteFile("/workspace/"+in.Path, []byte(in.Content), 0o644); err != nil {
				return "", err
			}
			for {
			}
		}, guest.Mutates(), guest.Needs(abi.Needs{Workspace: abi.AccessReadWrite})),
	)
}
