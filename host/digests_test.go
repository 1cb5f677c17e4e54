package host

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/fifotest"
)

// digestEngine is an engine on store whose module digests are kept in
// cache, as a process of its own would have it.
func digestEngine(t *testing.T, cache string, store checkpoint.Store) *Engine {
	t.Helper()
	eng, err := NewEngine(context.Background(), Config{CacheDir: cache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	return eng
}

// fileModule is the module file dir/m.wasm as loadModules finds it.
func fileModule(t *testing.T, dir string) toolModule {
	t.Helper()
	af, ref := &AgentFile{Dir: dir}, ToolRef{Module: "m.wasm"}
	identity := moduleIdentity(af, ref)
	wasm, err := os.ReadFile(af.resolve(ref.Module))
	if err != nil {
		t.Fatal(err)
	}
	return toolModule{Ref: ref, Wasm: wasm, identity: identity}
}

// A module the store keeps already is not hashed again by a later engine
// (here its bytes are swapped after reading, and the digest stays that of
// the file); one whose file was rewritten, even to the same size and
// modification time, is; and a store that lacks the blob is given it.
func TestModuleDigestRememberedByFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("module digests are remembered on Linux only")
	}
	dir, cache := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "m.wasm")
	first := []byte("module one")
	if err := os.WriteFile(path, first, 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, err := digestEngine(t, cache, store).keepModule(fileModule(t, dir), nil)
	if err != nil || got != digestOf(first) {
		t.Fatalf("first keep: %s, %v; want %s", got, err, digestOf(first))
	}

	m := fileModule(t, dir)
	m.Wasm = []byte("not what the file holds")
	if got, err := digestEngine(t, cache, store).keepModule(m, nil); err != nil || got != digestOf(first) {
		t.Fatalf("a later engine hashed the module again: %s, %v", got, err)
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a change time the rewrite cannot share
	second := []byte("module two")
	if err := os.WriteFile(path, second, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got, err := digestEngine(t, cache, store).keepModule(fileModule(t, dir), nil); err != nil || got != digestOf(second) {
		t.Fatalf("a rewritten module: %s, %v; want %s", got, err, digestOf(second))
	}

	other, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := digestEngine(t, cache, other).keepModule(fileModule(t, dir), nil); err != nil {
		t.Fatal(err)
	}
	if b, err := other.Blob(digestOf(second)); err != nil || string(b) != string(second) {
		t.Fatalf("a store without the blob was not given it: %q, %v", b, err)
	}
}

// The digests file is a cache: lines that do not parse are skipped, and
// one that cannot be written costs only a hash.
func TestModuleDigestsFileDamaged(t *testing.T) {
	cache := t.TempDir()
	good := digestOf([]byte("x"))
	junk := "no tab here\nid\tsha256:short\n" + digestLine("id2", good) + "\x00\x01\n"
	if err := os.WriteFile(filepath.Join(cache, digestsFile), []byte(junk), 0o600); err != nil {
		t.Fatal(err)
	}
	d := newModuleDigests(cache)
	if _, ok := d.lookup("id"); ok {
		t.Fatal("a line with a bad digest was read")
	}
	if got, ok := d.lookup("id2"); !ok || got != good {
		t.Fatalf("the good line: %q, %v", got, ok)
	}
	gone := newModuleDigests(filepath.Join(cache, "missing", "dir"))
	gone.remember("id", good)
	if got, ok := gone.lookup("id"); !ok || got != good {
		t.Fatalf("without its file the process still remembers: %q, %v", got, ok)
	}
}

// Regression for a line damaged on disk read as a digest: a digest or an
// identity changed in the file gave a module the digest of another (which
// the store may have), since both still parsed. A line whose checksum does
// not match is skipped, whatever became of it, and the others are read.
func TestModuleDigestsDamagedLineIsSkipped(t *testing.T) {
	digest, other := digestOf([]byte("x")), digestOf([]byte("y"))
	for _, c := range []struct {
		name   string
		damage func(line string) string
		lookup string // the identity that must not be found
	}{
		{"a digest's character changed", func(l string) string { return strings.Replace(l, digest[10:11], "0", 1) }, "id"},
		{"another digest in its place", func(l string) string { return strings.Replace(l, digest, other, 1) }, "id"},
		{"an identity's character changed", func(l string) string { return strings.Replace(l, "id", "ie", 1) }, "ie"},
		{"its checksum changed", func(l string) string { return l[:len(l)-3] + "00\n" }, "id"},
		{"zero-filled", func(l string) string { return strings.Repeat("\x00", len(l)-1) + "\n" }, "id"},
		{"cut short", func(l string) string { return l[:len(l)-4] + "\n" }, "id"},
		{"without its checksum, as written before", func(l string) string { return "id\t" + digest + "\n" }, "id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := t.TempDir()
			file := digestLine("before", other) + c.damage(digestLine("id", digest)) + digestLine("after", other)
			must(t, os.WriteFile(filepath.Join(cache, digestsFile), []byte(file), 0o600))
			d := newModuleDigests(cache)
			if got, ok := d.lookup(c.lookup); ok {
				t.Fatalf("the damaged line gave %q the digest %s", c.lookup, got)
			}
			for _, id := range []string{"before", "after"} {
				if got, ok := d.lookup(id); !ok || got != other {
					t.Errorf("the line of %s beside it: %q, %v", id, got, ok)
				}
			}
		})
	}
}

// The digests file replaced by a FIFO is not waited on, and one replaced
// by a directory is not read: a start hashes its modules, and goes on.
func TestModuleDigestsFileNotAFile(t *testing.T) {
	fifotest.RefusedAtOnce(t, func(path string) (func(), error) {
		_, err := readPlainFile(path, maxDigestsFile)
		return func() {}, err
	})
	cache := t.TempDir()
	must(t, os.Mkdir(filepath.Join(cache, digestsFile), 0o700))
	d := newModuleDigests(cache)
	d.remember("id", digestOf([]byte("x")))
	if got, ok := d.lookup("id"); !ok || got != digestOf([]byte("x")) {
		t.Fatalf("with a directory for its file the process still remembers: %q, %v", got, ok)
	}
}

// The file keeps the newest maxDigests entries.
func TestModuleDigestsBounded(t *testing.T) {
	cache := t.TempDir()
	d := newModuleDigests(cache)
	for i := range maxDigests + 10 {
		d.remember(string(rune('a'+i%26))+string(rune('0'+i)), digestOf([]byte{byte(i)}))
	}
	again := newModuleDigests(cache)
	again.load()
	if n := len(again.known); n != maxDigests {
		t.Fatalf("the file keeps %d entries, want %d", n, maxDigests)
	}
}

// A module built into cairn is who cairn's executable is: a new build is
// a new identity.
func TestModuleIdentityOfBuiltinIsTheExecutable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("module digests are remembered on Linux only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.Abs(exe)
	af := &AgentFile{Dir: t.TempDir()}
	for _, name := range []string{BuiltinModule, FetchModule} {
		id := moduleIdentity(af, ToolRef{Module: name})
		if !strings.HasPrefix(id, name+" "+exe+" ") {
			t.Errorf("%s: identity %q is not the executable's", name, id)
		}
	}
	if id := moduleIdentity(af, ToolRef{Module: "missing.wasm"}); id != "" {
		t.Errorf("a missing module has identity %q", id)
	}
}
