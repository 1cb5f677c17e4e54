package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/host"
)

var (
	oddOnce sync.Once
	oddBin  string
	oddErr  error
)

// oddServer builds testdata/oddserver once.
func oddServer(t *testing.T) string {
	t.Helper()
	oddOnce.Do(func() {
		oddBin = filepath.Join(filepath.Dir(testCache), "oddserver")
		if out, err := exec.Command("go", "build", "-o", oddBin, "./testdata/oddserver").CombinedOutput(); err != nil {
			oddErr = errors.New(string(out))
		}
	})
	if oddErr != nil {
		t.Fatalf("build the odd MCP server: %v", oddErr)
	}
	return oddBin
}

// sessionWith opens a session of an agent of the built-in tools and the
// MCP server entry, with the given approval rules.
func sessionWith(t *testing.T, entry, approvals string) (*host.Session, error) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	af, err := host.ParseAgentFile([]byte(`name: odd
model: {provider: script}
workspace: ws
tools: [{module: builtin}]
mcp: [`+entry+`]
`+approvals), dir)
	must(t, err)
	store, err := host.OpenStore(filepath.Join(dir, "store"))
	must(t, err)
	ctx := context.Background()
	eng, err := host.NewEngine(ctx, host.Config{CacheDir: testCache, Store: store, Connect: Connect})
	must(t, err)
	t.Cleanup(func() { eng.Close(ctx) })
	sess, err := eng.OpenSession(ctx, host.SessionOptions{Agent: af, ID: "o"})
	if err == nil {
		t.Cleanup(func() { sess.Close() })
	}
	return sess, err
}

func toolSchemas(sess *host.Session) map[string]string {
	out := map[string]string{}
	for _, t := range sess.Tools() {
		out[t.Name] = string(t.Schema)
	}
	return out
}

// Regression: an MCP server's tools went to the model whatever their
// names ("a b/c", 300 bytes, "ünï", ""), which model providers refuse,
// failing every request of the run. Such a tool keeps the run from
// starting, the error naming it, why, and how to leave it out (only:).
func TestServerToolNamesProvidersRefuse(t *testing.T) {
	bin := oddServer(t)
	_, err := sessionWith(t, "{name: odd, command: ["+bin+", names]}", "")
	if err == nil {
		t.Fatal("a server with tools named \"a b/c\", \"ünï\" and \"\" was taken")
	}
	for _, want := range []string{`tool "a b/c": its name has ' '`, `tool "ünï": its name has 'ü'`, `tool "": it has no name`,
		`its name has 300 bytes, more than 64`, "1 to 64 letters, digits, _ and -", "only: [ok]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	sess, err := sessionWith(t, "{name: odd, command: ["+bin+", names], only: [ok]}", "")
	must(t, err)
	if schemas := toolSchemas(sess); schemas["ok"] == "" || len(schemas) != 7 {
		t.Errorf("with only: [ok], the tools are %v; want the 6 built-in and ok", schemas)
	}
}

// Regression: a tool without an input schema was sent to the model with
// parameters null, and every call of it failed validation ("not:
// validated against <anonymous schema>"). It takes an object.
func TestServerToolWithoutInputSchemaTakesAnObject(t *testing.T) {
	sess, err := sessionWith(t, "{name: odd, command: ["+oddServer(t)+", noschema]}", "approvals: [{tool: bare, action: allow}]\n")
	must(t, err)
	if s := toolSchemas(sess)["bare"]; s != `{"type":"object"}` {
		t.Errorf("bare's schema: %s, want {\"type\":\"object\"}", s)
	}
	out, err := sess.Call(context.Background(), "bare", json.RawMessage(`{}`), nil)
	must(t, err)
	if out.IsError || out.Output != "called bare with {}" {
		t.Errorf("bare: %+v", out)
	}
}

// Regression: an MCP server's tool named as a built-in one (the official
// filesystem server's read_file beside `module: builtin`) kept the run
// from starting, and nothing in the agent file could help it. prefix:
// names the server's tools apart, only: leaves some out, and the error
// names both.
func TestServerToolNamedAsBuiltinTakesPrefix(t *testing.T) {
	bin := oddServer(t)
	_, err := sessionWith(t, "{name: fs, command: ["+bin+", read_file]}", "")
	if err == nil || !strings.Contains(err.Error(), `tool "read_file" is offered by two modules or servers`) ||
		!strings.Contains(err.Error(), "prefix: fs_") || !strings.Contains(err.Error(), "only:") {
		t.Fatalf("err = %v, want the collision naming prefix: and only:", err)
	}
	sess, err := sessionWith(t, "{name: fs, command: ["+bin+", read_file], prefix: fs_}", "approvals: [{tool: fs_read_file, action: allow}]\n")
	must(t, err)
	schemas := toolSchemas(sess)
	if schemas["read_file"] == "" || schemas["fs_read_file"] == "" || schemas["fs_ok"] == "" {
		t.Fatalf("tools %v, want read_file beside fs_read_file and fs_ok", schemas)
	}
	if got := sess.ServerOf("read_file") + "|" + sess.ServerOf("fs_read_file"); got != "|fs" {
		t.Errorf("ServerOf read_file|fs_read_file = %q", got)
	}
	out, err := sess.Call(context.Background(), "fs_read_file", json.RawMessage(`{"path":"x"}`), nil)
	must(t, err)
	if out.IsError || out.Output != `called read_file with {"path":"x"}` {
		t.Errorf("fs_read_file: %+v, want the server's read_file called", out)
	}
	sess, err = sessionWith(t, "{name: fs, command: ["+bin+", read_file], only: [ok]}", "")
	must(t, err)
	if s := toolSchemas(sess); s["ok"] == "" || sess.ServerOf("read_file") != "" {
		t.Errorf("with only: [ok]: tools %v, read_file on %q", s, sess.ServerOf("read_file"))
	}
	if _, err := sessionWith(t, "{name: fs, command: ["+bin+"], only: [nope]}", ""); err == nil ||
		!strings.Contains(err.Error(), `only: the server has no tool "nope" (it has ok)`) {
		t.Errorf("only: [nope]: %v", err)
	}
	if _, err := host.ParseAgentFile([]byte("name: x\nmodel: {provider: script}\nmcp: [{name: fs, command: [x], prefix: \"a b\"}]\n"), t.TempDir()); err == nil ||
		!strings.Contains(err.Error(), `prefix "a b"`) {
		t.Errorf("prefix \"a b\": %v", err)
	}
}

// Regression: a server whose tools/list cursor never ended was read until
// the time limit of its start, and reported as not starting ("check that
// ... speaks on its stdin and stdout"). The pages read are bounded, and
// the error says the list kept paginating.
func TestServerToolsListThatNeverEnds(t *testing.T) {
	bin := oddServer(t)
	for mode, want := range map[string]string{
		"cursor-repeat":  `page 2 gave the cursor "0", which an earlier page gave`,
		"cursor-endless": "100 pages (100 tools) and still a next cursor",
	} {
		start := time.Now()
		_, err := sessionWith(t, "{name: odd, command: ["+bin+", "+mode+"]}", "")
		if err == nil || !strings.Contains(err.Error(), "tools/list kept paginating") || !strings.Contains(err.Error(), want) ||
			strings.Contains(err.Error(), "did not start") {
			t.Errorf("%s: %v", mode, err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: refused after %s", mode, d)
		}
	}
}

// Regression: an MCP server's tool whose input schema is not of type
// object ({"type": "string"}, a list of types, true) was taken: served by
// `cairn mcp`, the SDK panicked at it and the server crashed at start; in
// a run, model providers, which take only an object, would refuse every
// request. Such a tool keeps the run from starting, as a name providers
// refuse does, the error naming it, why, and how to leave it out.
func TestServerToolSchemaNotAnObjectRefused(t *testing.T) {
	bin := oddServer(t)
	_, err := sessionWith(t, "{name: odd, command: ["+bin+", schemas]}", "")
	if err == nil {
		t.Fatal(`a server with tools whose input schemas are {"type": "string"}, {"type": ["object", "null"]} and true was taken`)
	}
	for _, want := range []string{`tool "str": its input schema is of type "string", not "object"`,
		`tool "either": its input schema is of type ["object","null"], not "object"`,
		`tool "yes": its input schema is true, not a JSON object`,
		"an input schema of type object", "only: [ok]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	sess, err := sessionWith(t, "{name: odd, command: ["+bin+", schemas], only: [ok]}", "")
	must(t, err)
	if _, err := NewServer(sess, Options{}); err != nil {
		t.Errorf("with only: [ok]: %v", err)
	}
}

// Regression: a server that lists a tool twice kept the run from
// starting with advice that cannot help: a prefix names both copies
// alike. The error says the server lists it twice, and that only: leaves
// it out; only: [ok] would pick both copies.
func TestServerToolListedTwice(t *testing.T) {
	bin := oddServer(t)
	for _, only := range []string{"", ", only: [ok]"} {
		_, err := sessionWith(t, "{name: odd, command: ["+bin+", twice]"+only+"}", "")
		if err == nil || !strings.Contains(err.Error(), `tool "ok": the server lists it 2 times`) || strings.Contains(err.Error(), "give the server a prefix") {
			t.Errorf("a server listing ok twice%s: %v", only, err)
		}
	}
}

// Regression: a server's tool whose input schema has an x-mcp-header the
// MCP SDK's client refuses (a header name with a space, a header on an
// object property) was left out of the server's tools without a word:
// the model, `cairn mcp` and the approval rules never saw it, and nothing
// said why. Such a tool keeps the run from starting, as a tool providers
// would refuse does, the error naming it, why, and the only: that leaves
// it out.
func TestServerToolDroppedForItsHeaderIsNamed(t *testing.T) {
	bin := oddServer(t)
	_, err := sessionWith(t, "{name: odd, command: ["+bin+", header]}", "")
	if err == nil {
		t.Fatal("a server whose tools spaced and nested the MCP client leaves out was taken without a word")
	}
	for _, want := range []string{`tool "spaced"`, `"Region Name"`, `tool "nested"`, `"where"`, "x-mcp-header", "only: [ok]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	_, err = sessionWith(t, "{name: odd, command: ["+bin+", header], only: [ok, spaced]}", "")
	if err == nil || !strings.Contains(err.Error(), `tool "spaced"`) || strings.Contains(err.Error(), "has no tool") {
		t.Errorf("only: naming spaced: %v", err)
	}
	sess, err := sessionWith(t, "{name: odd, command: ["+bin+", header], only: [ok]}", "")
	must(t, err)
	if schemas := toolSchemas(sess); schemas["ok"] == "" || len(schemas) != 7 {
		t.Errorf("with only: [ok], the tools are %v; want the 6 built-in and ok", schemas)
	}
}
