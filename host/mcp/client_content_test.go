package mcp

import (
	"encoding/base64"
	"strings"
	"testing"
)

// Regression: an MCP server tool's image was given to the model as the
// JSON of its content, its bytes in base64 (5,472 characters for an image
// of 4,096 bytes), and a binary resource likewise; contents ran together
// with nothing between them. The model reads each content on a line of
// its own: text as it is, a text resource with its URI, and a line naming
// an image's or a binary resource's type and size in place of its bytes.
func TestServerToolImageIsNamedNotInlined(t *testing.T) {
	_, st, err := runWithServer(t, "picture", "{}", "approvals: [{tool: picture, action: allow}]\n", toyServer(t))
	must(t, err)
	m := toolResult(t, st)
	want := "a red dot:\n" +
		"[an image (image/png, 4096 bytes) the tool answered; cairn gives a tool's text to the model, not this]\n" +
		"[resource file:///dot.bin (application/octet-stream, 100 bytes) the tool answered; cairn gives a tool's text to the model, not this]\n" +
		"[resource file:///dot.txt]\none red dot"
	if m.IsError || m.Text != want {
		t.Errorf("result %q, want %q", m.Text, want)
	}
	if strings.Contains(m.Text, base64.StdEncoding.EncodeToString([]byte("\x89PNG\x89PNG"))[:8]) {
		t.Errorf("the image's bytes reached the model: %q", m.Text)
	}
}
