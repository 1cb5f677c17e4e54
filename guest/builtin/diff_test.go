package builtin_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest"
	"github.com/cairnrun/cairn/guest/builtin"
	"github.com/cairnrun/cairn/guest/builtin/tools"
	"github.com/cairnrun/cairn/guest/pack"
	"github.com/cairnrun/cairn/sandbox"
)

// The differential tests run each call twice, in the sandbox, on two
// copies of one workspace: once through the embedded module (the tools in
// C) and once through the Go definitions in ./tools, built as the Go
// module they were embedded as. The responses, and the workspaces after
// the call, must be the same, byte for byte.

// modules are the runtime and both modules, made once per test binary:
// building and compiling the Go module takes seconds.
var modules = sync.OnceValues(func() (*pair, error) {
	ctx := context.Background()
	goWasm, err := goModule()
	if err != nil {
		return nil, err
	}
	rt, err := sandbox.NewRuntime(ctx, sandbox.Config{CacheDir: filepath.Join(testDir, "cache")})
	if err != nil {
		return nil, err
	}
	p := &pair{rt: rt}
	if p.c, err = rt.Compile(ctx, builtin.Module); err != nil {
		return nil, fmt.Errorf("compile the C module: %w", err)
	}
	if p.goRef, err = rt.Compile(ctx, goWasm); err != nil {
		return nil, fmt.Errorf("compile the Go module: %w", err)
	}
	return p, nil
})

// testDir holds what the tests build; it is removed when they end.
var testDir string

func TestMain(m *testing.M) {
	var err error
	if testDir, err = os.MkdirTemp("", "cairn-builtin-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(testDir)
	os.Exit(code)
}

// goModule is the Go tools of ./tools built as the module they were
// embedded as before the tools were written in C: a Go reactor.
var goModule = sync.OnceValues(func() ([]byte, error) {
	ref := filepath.Join(testDir, "go-builtin.wasm")
	if err := pack.BuildReactor("github.com/cairnrun/cairn/guest/builtin/cmd/builtin", ref,
		guest.ManifestOf(tools.All()...), false); err != nil {
		return nil, err
	}
	return os.ReadFile(ref)
})

type pair struct {
	rt       *sandbox.Runtime
	c, goRef *sandbox.Module
}

// cModule is the C module alone, for the tests that need no other.
var cModule = sync.OnceValues(func() (*sandbox.Module, error) {
	rt, err := sandbox.NewRuntime(context.Background(), sandbox.Config{CacheDir: filepath.Join(testDir, "cache-c")})
	if err != nil {
		return nil, err
	}
	return rt.Compile(context.Background(), builtin.Module)
})

func mustC(t testing.TB) *sandbox.Module {
	t.Helper()
	m, err := cModule()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustModules(t testing.TB) *pair {
	t.Helper()
	p, err := modules()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mutates is whether a tool gets the workspace read-write, as its
// manifest asks.
func mutates(tool string) bool { return tool == "write_file" || tool == "edit_file" }

// result is what a call gave: the response, or the error of a call that
// failed, and the workspace after it.
type result struct {
	Output, Error, CallError string
	Tree                     string
}

func run(t testing.TB, m *sandbox.Module, ws string, tool, input string) result {
	t.Helper()
	p := sandbox.Policy{Mounts: []sandbox.Mount{{HostPath: ws, GuestPath: abi.WorkspaceDir, ReadOnly: !mutates(tool)}}}
	req := abi.Request{ABI: abi.Version, Tool: tool, Input: input, Workspace: abi.WorkspaceDir, CallID: "c1"}
	res, err := m.Call(context.Background(), p, req)
	r := result{Output: res.Response.Output, Error: res.Response.Error, Tree: tree(t, ws)}
	if err != nil {
		r.CallError = err.Error()
	}
	return r
}

// tree describes a directory: each path, its type and its content.
func tree(t testing.TB, dir string) string {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, "%s -> %s\n", rel, target)
		case d.IsDir():
			fmt.Fprintf(&b, "%s/\n", rel)
		default:
			content, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %q\n", rel, content)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// files is the workspace every case starts from.
var files = map[string]string{
	"a.txt":              "one\ntwo\nthree\n",
	"crlf.txt":           "first\r\nsecond\r\n\r\nlast",
	"nonl.txt":           "no newline at the end",
	"sub/b.md":           "# B\nTODO: b\n",
	"sub/deep/c.md":      "todo: c\n",
	"sub/deep/er/d.go":   "package d\n// TODO(d): more\n",
	"sub/gaps.txt":       "x\n\ny",
	"sub/empty.txt":      "",
	"bin.dat":            "\x00\x01\x02",
	"dup.txt":            "x = 1\nx = 1\n",
	"invalid.txt":        "ok\xff\xfe bad\n",
	"late-invalid.txt":   strings.Repeat("a", 8100) + "\xff\xfe\nafter \xc3\n",
	"split.txt":          strings.Repeat("a", 7999) + "é and more\n",
	"unicode.txt":        "héllo wörld ☃\n日本語のテキスト\nKelvin K and ſ\n",
	"long.txt":           numbered("line %d of a long file\n", 2500),
	"wide.txt":           numbered(strings.Repeat("w", 400)+" %d\n", 1000),
	"many.txt":           numbered("match %d\n", 600),
	".hidden":            "hidden TODO\n",
	"odd name's \"q\".t": "quoted\n",
	"tab\tname.txt":      "tab\n",
	"dir.with.dots/e.md": "TODO: e\n",
	"a.md":               "# A\n",
	"a/x.md":             "# X\n",
	"emptydir/":          "",
}

func numbered(format string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

// workspace makes a fresh copy of files in a new directory, with symbolic
// links inside it.
func workspace(t testing.TB) string { return workspaceOf(t, files) }

func workspaceOf(t testing.TB, files map[string]string) string {
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"link.txt": "a.txt", "linkdir": "sub", "sub/up.md": "../a.md", "dangling": "nowhere"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// compare runs one call through both modules on two fresh workspaces.
func compare(t testing.TB, tool, input string) { compareIn(t, files, tool, input) }

func compareIn(t testing.TB, files map[string]string, tool, input string) {
	t.Helper()
	p := mustModules(t)
	got := run(t, p.c, workspaceOf(t, files), tool, input)
	want := run(t, p.goRef, workspaceOf(t, files), tool, input)
	if got.Output != want.Output || got.Error != want.Error || got.CallError != want.CallError {
		t.Errorf("%s %s:\n C: output %q\n    error %q %s\nGo: output %q\n    error %q %s", tool, input,
			clip(got.Output), got.Error, got.CallError, clip(want.Output), want.Error, want.CallError)
	}
	if got.Tree != want.Tree {
		t.Errorf("%s %s: the workspaces differ after the call:\n C: %s\nGo: %s", tool, input, got.Tree, want.Tree)
	}
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:300] + " ... " + s[len(s)-300:]
	}
	return s
}

func TestBuiltinAgainstGo(t *testing.T) {
	cases := []struct{ tool, input string }{
		// read_file
		{"read_file", `{"path": "a.txt"}`},
		{"read_file", `{"path": "a.txt", "offset": 2, "limit": 1}`},
		{"read_file", `{"path": "a.txt", "offset": 3}`},
		{"read_file", `{"path": "a.txt", "offset": 4}`},
		{"read_file", `{"path": "a.txt", "offset": 9}`},
		{"read_file", `{"path": "a.txt", "offset": -3, "limit": -1}`},
		{"read_file", `{"path": "a.txt", "limit": 0}`},
		{"read_file", `{"path": "crlf.txt"}`},
		{"read_file", `{"path": "nonl.txt"}`},
		{"read_file", `{"path": "sub/gaps.txt", "offset": 2, "limit": 1}`},
		{"read_file", `{"path": "sub/gaps.txt", "offset": 3}`},
		{"read_file", `{"path": "sub/empty.txt"}`},
		{"read_file", `{"path": "sub/empty.txt", "offset": 2}`},
		{"read_file", `{"path": "bin.dat"}`},
		{"read_file", `{"path": "invalid.txt"}`},
		{"read_file", `{"path": "late-invalid.txt"}`},
		{"read_file", `{"path": "split.txt"}`},
		{"read_file", `{"path": "unicode.txt"}`},
		{"read_file", `{"path": "long.txt"}`},
		{"read_file", `{"path": "long.txt", "offset": 2400}`},
		{"read_file", `{"path": "long.txt", "offset": 100, "limit": 5000}`},
		{"read_file", `{"path": "wide.txt"}`},
		{"read_file", `{"path": "wide.txt", "offset": 900, "limit": 3}`},
		{"read_file", `{"path": "nope.txt"}`},
		{"read_file", `{"path": "nope/deeper.txt"}`},
		{"read_file", `{"path": "a.txt/x"}`},
		{"read_file", `{"path": "sub"}`},
		{"read_file", `{"path": ""}`},
		{"read_file", `{}`},
		{"read_file", `{"path": "/etc/passwd"}`},
		{"read_file", `{"path": "sub/../../x"}`},
		{"read_file", `{"path": ".."}`},
		{"read_file", `{"path": "./sub/./b.md"}`},
		{"read_file", `{"path": "sub//deep/../b.md"}`},
		{"read_file", `{"path": "link.txt"}`},
		{"read_file", `{"path": "linkdir/b.md"}`},
		{"read_file", `{"path": "dangling"}`},
		{"read_file", `{"path": "odd name's \"q\".t"}`},
		{"read_file", `{"path": "/\u00e9\u00a0\u200b\t\ud83d\ude00"}`},
		{"read_file", `{"path": "\u0000"}`},
		{"read_file", `{"path": "..\ud800x"}`},
		// JSON input, as encoding/json reads it
		{"read_file", ``},
		{"read_file", `  `},
		{"read_file", `null`},
		{"read_file", `{"PATH": "a.txt", "Limit": 1}`},
		{"read_file", `{"paTH": "a.txt", "offſet": 2}`},
		{"read_file", `{"path": "a.txt", "path": "nonl.txt"}`},
		{"read_file", `{"path": "a.txt", "extra": {"x": [1, 2, {"y": null}]}}`},
		{"read_file", `{"path": 3}`},
		{"read_file", `{"path": "a.txt", "offset": "2"}`},
		{"read_file", `{"path": "a.txt", "offset": 1.5}`},
		{"read_file", `{"path": "a.txt", "offset": 1e2}`},
		{"read_file", `{"path": "a.txt", "offset": 99999999999999999999}`},
		{"read_file", `{"path": "a.txt", "offset": true, "limit": [1]}`},
		{"read_file", `{"path": null, "offset": null}`},
		{"read_file", `{"path": "a.txt"} trailing`},
		{"read_file", `[1, 2]`},
		{"read_file", `"a.txt"`},
		{"read_file", `12`},
		{"read_file", `{"path": "a.txt"`},
		{"read_file", `{"path" "a.txt"}`},
		{"read_file", `{path: "a.txt"}`},
		{"read_file", `{"path": "a.txt",}`},
		{"read_file", `{"path": "\x"}`},
		{"read_file", `{"path": "\u12"}`},
		{"read_file", `{"path": "a` + "\n" + `"}`},
		{"read_file", `{"offset": -}`},
		{"read_file", `{"offset": 1.}`},
		{"read_file", `{"offset": 1e}`},
		{"read_file", `{"offset": tru}`},
		{"read_file", `{"offset": nul}`},
		{"read_file", `{"path": "\u00e9\ud83d\ude00\ud800\udc00\\\/\b\f\n\r\t"}`},
		{"read_file", `'a'`},
		// write_file
		{"write_file", `{"path": "new/dir/n.txt", "content": "hello"}`},
		{"write_file", `{"path": "a.txt", "content": ""}`},
		{"write_file", `{"path": "a.txt", "content": "é\u0000\ud83d\ude00"}`},
		{"write_file", `{"path": ".", "content": "x"}`},
		{"write_file", `{"path": "", "content": "x"}`},
		{"write_file", `{"path": "sub", "content": "x"}`},
		{"write_file", `{"path": "a.txt/x", "content": "x"}`},
		{"write_file", `{"path": "a.txt/x/y", "content": "x"}`},
		{"write_file", `{"path": "/abs", "content": "x"}`},
		{"write_file", `{"path": "../x", "content": "x"}`},
		{"write_file", `{"path": "emptydir/f", "content": "in"}`},
		{"write_file", `{"path": "link.txt", "content": "through the link"}`},
		{"write_file", `{"path": "linkdir/new.txt", "content": "x"}`},
		{"write_file", `{"path": "x.txt"}`},
		// edit_file
		{"edit_file", `{"path": "a.txt", "old_text": "two", "new_text": "2"}`},
		{"edit_file", `{"path": "dup.txt", "old_text": "x = 1", "new_text": "x = 2"}`},
		{"edit_file", `{"path": "dup.txt", "old_text": "x = 1", "new_text": "x = 2", "replace_all": true}`},
		{"edit_file", `{"path": "dup.txt", "old_text": "x", "new_text": "xx", "replace_all": true}`},
		{"edit_file", `{"path": "a.txt", "old_text": "four", "new_text": "4"}`},
		{"edit_file", `{"path": "a.txt", "old_text": "", "new_text": "4"}`},
		{"edit_file", `{"path": "nope.txt", "old_text": "a", "new_text": "b"}`},
		{"edit_file", `{"path": "sub", "old_text": "a", "new_text": "b"}`},
		{"edit_file", `{"path": "bin.dat", "old_text": "\u0001", "new_text": "b"}`},
		{"edit_file", `{"path": "unicode.txt", "old_text": "ö", "new_text": "oe"}`},
		{"edit_file", `{"path": "a.txt", "old_text": "o", "new_text": "", "replace_all": false}`},
		{"edit_file", `{"path": "a.txt", "old_text": "e", "new_text": "E", "replace_all": "yes"}`},
		{"edit_file", `{"path": "crlf.txt", "old_text": "\r\n", "new_text": "\n", "replace_all": true}`},
		// list_dir
		{"list_dir", `{}`},
		{"list_dir", `{"path": "sub"}`},
		{"list_dir", `{"path": "sub/deep/"}`},
		{"list_dir", `{"path": "emptydir"}`},
		{"list_dir", `{"path": "a.txt"}`},
		{"list_dir", `{"path": "nope"}`},
		{"list_dir", `{"path": "linkdir"}`},
		{"list_dir", `{"path": "../"}`},
		// glob
		{"glob", `{"pattern": "**/*.md"}`},
		{"glob", `{"pattern": "*.go"}`},
		{"glob", `{"pattern": "*"}`},
		{"glob", `{"pattern": "**"}`},
		{"glob", `{"pattern": "sub/*"}`},
		{"glob", `{"pattern": "sub/**"}`},
		{"glob", `{"pattern": "*/*.md"}`},
		{"glob", `{"pattern": "**/deep/**/*.go"}`},
		{"glob", `{"pattern": "a.txt"}`},
		{"glob", `{"pattern": "sub"}`},
		{"glob", `{"pattern": "nope.txt"}`},
		{"glob", `{"pattern": "?.txt"}`},
		{"glob", `{"pattern": "[ab].*"}`},
		{"glob", `{"pattern": "[!a]*.txt"}`},
		{"glob", `{"pattern": "{a,sub/b}.md"}`},
		{"glob", `{"pattern": "**/*.{md,go}"}`},
		{"glob", `{"pattern": "linkdir/*"}`},
		{"glob", `{"pattern": "[a"}`},
		{"glob", `{"pattern": "{a"}`},
		{"glob", `{"pattern": "a\\"}`},
		{"glob", `{"pattern": "/etc/*"}`},
		{"glob", `{"pattern": "../*"}`},
		{"glob", `{"pattern": "sub/../*.txt"}`},
		{"glob", `{"pattern": "./*.txt"}`},
		{"glob", `{"pattern": ".*"}`},
		{"glob", `{"pattern": "dir.with.dots/*"}`},
		{"glob", `{"pattern": "a.txt/"}`},
		{"glob", `{"pattern": "\\*.txt"}`},
		{"glob", `{"pattern": "sub/./*.md"}`},
		{"glob", `{"pattern": "**/"}`},
		{"glob", `{"pattern": "sub/**/"}`},
		{"glob", `{"pattern": "*/"}`},
		{"glob", `{"pattern": "{sub,a}/*.md"}`},
		{"glob", `{"pattern": "{sub/deep,a}/**"}`},
		{"glob", `{"pattern": "sub/{deep/*,*}.md"}`},
		{"glob", `{"pattern": "dangling"}`},
		{"glob", `{"pattern": "link*"}`},
		{"glob", `{"pattern": "emptydir/*"}`},
		{"glob", `{"pattern": "**/er/*"}`},
		// grep
		{"grep", `{"pattern": "^todo", "ignore_case": true}`},
		{"grep", `{"pattern": "TODO"}`},
		{"grep", `{"pattern": "TODO", "glob": "sub/*.md"}`},
		{"grep", `{"pattern": "TODO", "glob": "**/*.go"}`},
		{"grep", `{"pattern": "TODO", "path": "sub"}`},
		{"grep", `{"pattern": "TODO", "path": "sub/b.md"}`},
		{"grep", `{"pattern": "TODO", "path": "nope"}`},
		{"grep", `{"pattern": "TODO", "path": "/x"}`},
		{"grep", `{"pattern": "TODO", "path": "linkdir"}`},
		{"grep", `{"pattern": "TODO", "glob": "[x"}`},
		{"grep", `{"pattern": "match"}`},
		{"grep", `{"pattern": "w 9"}`},
		{"grep", `{"pattern": "second"}`},
		{"grep", `{"pattern": "after"}`},
		{"grep", `{"pattern": "a"}`},
		{"grep", `{"pattern": "nothing matches this"}`},
		{"grep", `{"pattern": "("}`},
		{"grep", `{"pattern": "x*"}`},
		{"grep", `{"pattern": "k", "ignore_case": true, "path": "unicode.txt"}`},
		{"grep", `{"pattern": "(", "ignore_case": true}`},
		{"grep", `{"pattern": "[[:foo:]]"}`},
		{"grep", `{"pattern": "a{1001}"}`},
		{"grep", `{"pattern": "x\\"}`},
		{"grep", `{"pattern": "(?P<n>TODO)\\b", "glob": "{sub,a}/**"}`},
		{"grep", `{"pattern": "TODO", "path": "sub/deep/../b.md"}`},
		{"grep", `{"pattern": "TODO", "path": "dangling"}`},
		{"grep", `{"pattern": "TODO", "path": "emptydir"}`},
	}
	for _, c := range cases {
		compare(t, c.tool, c.input)
	}
}

// Where the C module does not do what the Go tools do, it says so: the
// regex matcher knows no Unicode classes, and refuses a pattern with one
// in words the model can act on.
func TestBuiltinKnownDifferences(t *testing.T) {
	r := run(t, mustC(t), workspace(t), "grep", `{"pattern": "\\pL+"}`)
	if r.Output != "" || !strings.Contains(r.Error, "Unicode classes are not supported, use explicit ranges") {
		t.Errorf("grep \\pL: output %q, error %q; want a refusal", r.Output, r.Error)
	}
}

// Asked with --cairn-manifest, the module writes the manifest packed into
// it, which is the Go definitions'.
func TestBuiltinDescribes(t *testing.T) {
	m := mustC(t)
	described, err := m.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	packed, err := abi.ReadManifest(builtin.Module)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(described, packed) || !reflect.DeepEqual(packed, guest.ManifestOf(tools.All()...)) {
		t.Errorf("described %+v\npacked %+v", described, packed)
	}
}
