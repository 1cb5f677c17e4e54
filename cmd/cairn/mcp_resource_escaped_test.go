package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: a resource within the 8 MiB a read returns, but whose text
// JSON escapes to more than an MCP message carries (7 MiB of quotes is
// 14 MiB escaped, NUL bytes six times their size), was sent as text all
// the same: the SDK's client could not read the answer and lost its
// session. Such a file is sent as a blob, which base64 keeps within it.
func TestMCPResourceThatEscapesLarge(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	must(t, os.Mkdir(ws, 0o755))
	content := strings.Repeat("\x00\"", 7<<19) // 7 MiB, valid UTF-8
	must(t, os.WriteFile(filepath.Join(ws, "zeros.txt"), []byte(content), 0o644))
	cmd := exec.Command(bin, "mcp", "--workspace", ws, "--store", filepath.Join(dir, "store"), "--cache", cacheForTests(t))
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.CommandTransport{Command: cmd}, nil)
	must(t, err)
	defer cs.Close()
	res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "file://" + filepath.ToSlash(ws) + "/zeros.txt"})
	if err != nil {
		t.Fatalf("read the resource: %v", err)
	}
	if len(res.Contents) != 1 || (res.Contents[0].Text != content && string(res.Contents[0].Blob) != content) {
		t.Fatalf("the resource read is not the file's content")
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("the session did not go on: %v", err)
	}
}
