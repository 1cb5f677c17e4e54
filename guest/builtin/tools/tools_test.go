package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest"
)

// call runs a built-in tool natively against dir as its workspace, through
// the same Serve path the wasm module takes.
func call(t *testing.T, dir, tool, input string) (string, string) {
	t.Helper()
	req, _ := abi.Marshal(abi.Request{ABI: abi.Version, Tool: tool, Input: input, Workspace: dir})
	var out bytes.Buffer
	guest.Serve(bytes.NewReader(req), &out, All()...)
	resp, err := abi.DecodeResponse(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Output, resp.Error
}

func workspace(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"a.txt":         "one\ntwo\nthree\n",
		"sub/b.md":      "# B\nTODO: b\n",
		"sub/deep/c.md": "todo: c\n",
		"bin.dat":       "\x00\x01\x02",
		"dup.txt":       "x = 1\nx = 1\n",
		"sub/gaps.txt":  "x\n\ny",
		"sub/empty.txt": "",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTools(t *testing.T) {
	dir := workspace(t)
	tests := []struct {
		tool, input string
		output      string // contained in the output
		errText     string // contained in the error; "" for success
	}{
		{"read_file", `{"path": "a.txt"}`, "     1\tone\n     2\ttwo\n     3\tthree\n", ""},
		{"read_file", `{"path": "a.txt", "offset": 2, "limit": 1}`, "     2\ttwo\n(a.txt has 3 lines; shown 2 to 2; read on with offset 3)", ""},
		{"read_file", `{"path": "a.txt", "offset": 9}`, "", "offset 9 is past the end"},
		{"read_file", `{"path": "a.txt", "offset": 4}`, "", "a.txt has 3 lines; offset 4 is past the end"},
		{"read_file", `{"path": "sub/gaps.txt"}`, "     1\tx\n     2\t\n     3\ty\n", ""},
		{"read_file", `{"path": "sub/gaps.txt", "offset": 2, "limit": 1}`, "     2\t\n(sub/gaps.txt has 3 lines; shown 2 to 2; read on with offset 3)", ""},
		{"read_file", `{"path": "sub/gaps.txt", "offset": 3}`, "     3\ty\n", ""},
		{"read_file", `{"path": "bin.dat"}`, "", "binary file"},
		{"read_file", `{"path": "nope.txt"}`, "", "nope.txt does not exist"},
		{"read_file", `{"path": "/etc/passwd"}`, "", "absolute"},
		{"read_file", `{"path": "sub/../../x"}`, "", "cannot leave it"},
		{"list_dir", `{}`, "a.txt\t14 bytes\nbin.dat\t3 bytes\ndup.txt\t12 bytes\nsub/\n", ""},
		{"glob", `{"pattern": "**/*.md"}`, "sub/b.md\nsub/deep/c.md\n", ""},
		{"glob", `{"pattern": "*.go"}`, "no files match", ""},
		{"grep", `{"pattern": "^todo", "ignore_case": true}`, "sub/b.md:2: TODO: b\nsub/deep/c.md:1: todo: c\n", ""},
		{"grep", `{"pattern": "TODO", "glob": "sub/*.md"}`, "sub/b.md:2: TODO: b\n", ""},
		{"grep", `{"pattern": "("}`, "", "pattern"},
		{"edit_file", `{"path": "dup.txt", "old_text": "x = 1", "new_text": "x = 2"}`, "", "occurs 2 times in dup.txt"},
		{"edit_file", `{"path": "a.txt", "old_text": "four", "new_text": "4"}`, "", "old_text not found in a.txt"},
		{"edit_file", `{"path": "a.txt", "old_text": "two", "new_text": "2"}`, "replaced 1 occurrence(s) in a.txt", ""},
		{"write_file", `{"path": "new/dir/n.txt", "content": "hello"}`, "wrote 5 bytes to new/dir/n.txt", ""},
	}
	for _, tt := range tests {
		out, errText := call(t, dir, tt.tool, tt.input)
		if tt.errText == "" && (errText != "" || !strings.Contains(out, tt.output)) {
			t.Errorf("%s %s: output %q error %q; want output with %q", tt.tool, tt.input, out, errText, tt.output)
		}
		if tt.errText != "" && !strings.Contains(errText, tt.errText) {
			t.Errorf("%s %s: error %q; want one with %q", tt.tool, tt.input, errText, tt.errText)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\n2\nthree\n" {
		t.Errorf("edit_file left %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new/dir/n.txt")); string(b) != "hello" {
		t.Errorf("write_file left %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "dup.txt")); string(b) != "x = 1\nx = 1\n" {
		t.Errorf("a refused edit changed the file: %q", b)
	}
}
