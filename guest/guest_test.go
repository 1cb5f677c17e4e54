package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
)

type addIn struct {
	A    int     `json:"a" desc:"first"`
	B    int     `json:"b"`
	Note *string `json:"note"`
	Tag  string  `json:"tag,omitempty"`
}

var testTools = []Tool{
	Define("add", "Adds.", func(c *Call, in addIn) (string, error) {
		return strings.Repeat("+", in.A+in.B), nil
	}, Idempotent()),
	Define("fail", "Fails.", func(c *Call, in struct{}) (string, error) { return "", errors.New("no luck") }),
	Define("boom", "Panics.", func(c *Call, in struct{}) (string, error) { panic("kaboom") }),
	Define("where", "Says where.", func(c *Call, in struct {
		P string `json:"p"`
	}) (string, error) {
		return c.Path(in.P), nil
	}),
}

func serve(t *testing.T, tool, input string) abi.Response {
	t.Helper()
	req, _ := abi.Marshal(abi.Request{ABI: abi.Version, Tool: tool, CallID: "c1", Input: input, Workspace: "/workspace"})
	var out bytes.Buffer
	if code := Serve(bytes.NewReader(req), &out, testTools...); code != 0 {
		t.Fatalf("exit %d", code)
	}
	resp, err := abi.DecodeResponse(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestServe(t *testing.T) {
	tests := []struct {
		tool, input, output, errText string
	}{
		{"add", `{"a": 1, "b": 2, "note": null}`, "+++", ""},
		{"add", `{"a": 1, "b": 2, "c": 3}`, "", `unknown field "c"`},
		{"add", `{"a": "one", "b": 2}`, "", "cannot unmarshal string"},
		{"add", `{"a": 1,`, "", "invalid arguments for add"},
		{"fail", `{}`, "", "no luck"},
		{"boom", `{}`, "", "tool boom panicked: kaboom"},
		{"nosuch", `{}`, "", `no tool "nosuch"; it has add, fail, boom, where`},
		{"where", `{"p": "../../etc/passwd"}`, "/workspace/etc/passwd", ""},
		{"where", `{"p": "a/./b"}`, "/workspace/a/b", ""},
	}
	for _, tt := range tests {
		resp := serve(t, tt.tool, tt.input)
		if resp.Output != tt.output || !strings.Contains(resp.Error, tt.errText) || (tt.errText == "") != (resp.Error == "") {
			t.Errorf("%s %s: got output %q error %q; want %q and an error with %q", tt.tool, tt.input, resp.Output, resp.Error, tt.output, tt.errText)
		}
	}
}

func TestServeBadRequest(t *testing.T) {
	var out bytes.Buffer
	if code := Serve(strings.NewReader("not cbor"), &out, testTools...); code != 0 {
		t.Fatalf("exit %d", code)
	}
	resp, err := abi.DecodeResponse(out.Bytes())
	if err != nil || !strings.Contains(resp.Error, "decode request") {
		t.Fatalf("response %+v, %v", resp, err)
	}
}

func TestSchemaOf(t *testing.T) {
	var got map[string]any
	if err := json.Unmarshal([]byte(SchemaOf(addIn{})), &got); err != nil {
		t.Fatal(err)
	}
	props := got["properties"].(map[string]any)
	if props["a"].(map[string]any)["type"] != "integer" || props["a"].(map[string]any)["description"] != "first" {
		t.Errorf("property a: %v", props["a"])
	}
	req := got["required"].([]any)
	if len(req) != 2 || req[0] != "a" || req[1] != "b" {
		t.Errorf("required %v, want [a b] (pointers and omitempty are optional)", req)
	}
	if got["additionalProperties"] != false {
		t.Error("unknown properties are allowed")
	}
}

func TestManifestOf(t *testing.T) {
	m := ManifestOf(testTools...)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if add, _ := m.Lookup("add"); !add.Idempotent || add.Mutates {
		t.Errorf("add: %+v", add)
	}
}

// A tool whose output, or error, is not UTF-8 (the bytes of a Latin-1 file,
// say) answers with each bad sequence replaced by U+FFFD, so that the
// response is one the strictest reader takes.
func TestServeMakesOutputUTF8(t *testing.T) {
	tools := []Tool{
		Define("latin1", "Prints Latin-1.", func(c *Call, in struct{}) (string, error) { return "caf\xe9", nil }),
		Define("badfail", "Fails in Latin-1.", func(c *Call, in struct{}) (string, error) { return "", errors.New("non \xe0 moi") }),
	}
	for tool, want := range map[string]abi.Response{
		"latin1":  {ABI: abi.Version, Output: "caf\uFFFD"},
		"badfail": {ABI: abi.Version, Error: "non \uFFFD moi"},
	} {
		req, _ := abi.Marshal(abi.Request{ABI: abi.Version, Tool: tool, CallID: "c1", Input: "{}", Workspace: "/workspace"})
		var out bytes.Buffer
		if code := Serve(bytes.NewReader(req), &out, tools...); code != 0 {
			t.Fatalf("%s: exit %d", tool, code)
		}
		if text := want.Output + want.Error; !bytes.Contains(out.Bytes(), []byte(text)) {
			t.Errorf("%s: the response does not carry %q as written: %q", tool, text, out.Bytes())
		}
		if got, err := abi.DecodeResponse(out.Bytes()); err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", tool, got, err, want)
		}
	}
}

// A tool built with the package links no general CBOR library and no
// regular expressions: each made the module of every Go tool larger (by
// 1.4 MB together, for the example's), and a first call compiles all of it.
func TestGuestLinksNoHeavyPackages(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "github.com/cairnrun/cairn/guest")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "regexp" || strings.HasPrefix(pkg, "github.com/fxamacker/cbor") {
			t.Errorf("the guest package links %s", pkg)
		}
	}
}
