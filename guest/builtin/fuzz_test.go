package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox"
)

// fuzzFiles is the small workspace of the fuzz targets.
var fuzzFiles = map[string]string{
	"a.txt":          "one\ntwo\r\nthree\n",
	"b.md":           "# B\nTODO: b é\n\x00",
	"sub/c.go":       "package c\n// todo\nx := \"\\xff\"\n",
	"sub/deep/d.txt": "d\xff\nlast",
	"sub/e.txt":      "",
	"empty/":         "",
}

var fuzzTools = []string{"read_file", "write_file", "edit_file", "list_dir", "glob", "grep"}

// fuzzInput makes a tool's JSON input from the fuzzer's values: in raw
// mode s1 itself, otherwise the tool's fields set from them.
func fuzzInput(tool string, raw bool, s1, s2, s3 string, n1, n2 int64, flag bool) string {
	if raw {
		return s1
	}
	var in map[string]any
	switch tool {
	case "read_file":
		in = map[string]any{"path": s1}
		if flag {
			in["offset"], in["limit"] = n1, n2
		}
	case "write_file":
		in = map[string]any{"path": s1, "content": s2}
	case "edit_file":
		in = map[string]any{"path": s1, "old_text": s2, "new_text": s3, "replace_all": flag}
	case "list_dir":
		in = map[string]any{"path": s1}
	case "glob":
		in = map[string]any{"pattern": s1}
	case "grep":
		in = map[string]any{"pattern": s1, "path": s2, "glob": s3, "ignore_case": flag}
	}
	b, _ := json.Marshal(in)
	return string(b)
}

// FuzzBuiltinAgainstGo runs a tool of both modules on the same input and
// workspace: the responses and the workspaces after must be the same.
//
//	go test ./guest/builtin -run '^$' -fuzz FuzzBuiltinAgainstGo -fuzztime 5m
func FuzzBuiltinAgainstGo(f *testing.F) {
	seeds := []struct {
		tool, mode uint8
		s1, s2, s3 string
		n1, n2     int64
		flag       bool
	}{
		{0, 1, "a.txt", "", "", 2, 1, true},
		{0, 1, "sub/deep/d.txt", "", "", 0, 0, false},
		{0, 0, `{"path": "b.md", "offset": 1.5}`, "", "", 0, 0, false},
		{0, 0, `{"path": "a\u00e9\ud800", "Offset": 2, "x": [1, {"y": null}]}`, "", "", 0, 0, false},
		{1, 1, "sub/new/f.txt", "content\n", "", 0, 0, false},
		{2, 1, "a.txt", "t", "T", 0, 0, true},
		{2, 1, "a.txt", "\r\n", "\n", 0, 0, false},
		{3, 1, "sub", "", "", 0, 0, false},
		{4, 1, "**/*.txt", "", "", 0, 0, false},
		{4, 1, "{a,sub/*}.{txt,go}", "", "", 0, 0, false},
		{5, 1, "^t", "", "**/*.txt", 0, 0, true},
		{5, 1, "(?i)todo|x+", "sub", "", 0, 0, false},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.mode, s.s1, s.s2, s.s3, s.n1, s.n2, s.flag)
	}
	// Built and compiled before fuzzing: an input that takes more than
	// 10 s counts as hung.
	mustModules(f)
	f.Fuzz(func(t *testing.T, tool, mode uint8, s1, s2, s3 string, n1, n2 int64, flag bool) {
		name := fuzzTools[int(tool)%len(fuzzTools)]
		input := fuzzInput(name, mode%4 == 0, s1, s2, s3, n1, n2, flag)
		if !utf8.ValidString(input) {
			// A request carries UTF-8 text; the host never sends other.
			input = strings.ToValidUTF8(input, "\uFFFD")
		}
		compareIn(t, fuzzFiles, name, input)
	})
}

// FuzzRequestBytes gives the C module's CBOR decoder any bytes for a
// request: the module must not trap, and must answer with one valid
// response, an error when the abi package refuses the bytes too.
//
//	go test ./guest/builtin -run '^$' -fuzz FuzzRequestBytes -fuzztime 2m
func FuzzRequestBytes(f *testing.F) {
	for _, r := range []abi.Request{
		{ABI: 1, Tool: "list_dir", Input: "{}", Workspace: abi.WorkspaceDir},
		{ABI: 2, Tool: "read_file", Input: `{"path":"a.txt"}`, Workspace: abi.WorkspaceDir, CallID: "x"},
		{},
	} {
		b, _ := abi.Marshal(r)
		f.Add(b)
	}
	f.Add([]byte{0xa1, 0x63, 'a', 'b', 'i', 0x01, 0xff})
	f.Add([]byte{0xa2, 0x63, 'a', 'b', 'i', 0x01, 0x61, 'x', 0x9f, 0xff})
	f.Add([]byte{0xa1, 0x63, 'a', 'b', 'i', 0xc1, 0x01})
	c := mustC(f)
	f.Fuzz(func(t *testing.T, req []byte) {
		ws := workspaceOf(t, fuzzFiles)
		pol := sandbox.Policy{Mounts: []sandbox.Mount{{HostPath: ws, GuestPath: abi.WorkspaceDir, ReadOnly: true}}}
		var out, errOut bytes.Buffer
		ex, err := c.Run(context.Background(), pol, bytes.NewReader(req), &out, &errOut)
		if err != nil || ex.Code != 0 {
			t.Fatalf("the module failed on %x: %v, exit %d, log %q", req, err, ex.Code, errOut.Bytes())
		}
		resp, err := abi.DecodeResponse(out.Bytes())
		if err != nil {
			t.Fatalf("the response to %x is not one: %v", req, err)
		}
		if _, err := abi.DecodeRequest(req); err != nil && resp.Error == "" {
			t.Fatalf("abi refuses %x (%v), and the module answered it: %q", req, err, resp.Output)
		}
	})
}

// FuzzInputJSON gives the C module's JSON decoder any input for each
// tool: the module must not trap, and must answer.
//
//	go test ./guest/builtin -run '^$' -fuzz FuzzInputJSON -fuzztime 2m
func FuzzInputJSON(f *testing.F) {
	for _, s := range []string{`{"path":"a.txt"}`, `{"path":"\ud83d\ude00\u0000","offset":-1}`, `[[[[`, `{"a":{"b":[1,2,{"c":"\""}]}}`,
		`{"pattern":"x","glob":"*","ignore_case":true}`, strings.Repeat("[", 10001)} {
		f.Add(uint8(0), s)
	}
	c := mustC(f)
	f.Fuzz(func(t *testing.T, tool uint8, input string) {
		if !utf8.ValidString(input) {
			input = strings.ToValidUTF8(input, "\uFFFD")
		}
		name := fuzzTools[int(tool)%len(fuzzTools)]
		r := run(t, c, workspaceOf(t, fuzzFiles), name, input)
		if r.CallError != "" {
			t.Fatalf("%s %q: the call failed: %s", name, input, r.CallError)
		}
	})
}
