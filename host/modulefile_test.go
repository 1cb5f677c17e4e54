package host

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox"
)

// The head of a module file says what its whole bytes say of its manifest
// and imports: the example's textstats, the hostile test module (which
// imports more of WASI), the network tool.
func TestModuleHeadIsWhatAStartReads(t *testing.T) {
	for _, path := range []string{filepath.Join("..", "examples", "tools", "textstats", "textstats.wasm"), hostileWasm, netTool(t)} {
		wasm, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, ok := openModuleFile(path)
		if !ok {
			t.Fatalf("%s: no head", path)
		}
		if len(f.head) > len(wasm)/10 {
			t.Errorf("%s: a head of %d bytes of %d", path, len(f.head), len(wasm))
		}
		checkHead(t, wasm, f.head)
	}
}

// checkHead fails unless head reads as wasm does: the same manifest (or
// error), and where wasm's imports read, the same network import and
// imports denied. (Where they do not, the start leaves the module to the
// compile to refuse; its head may read.)
func checkHead(t *testing.T, wasm, head []byte) {
	t.Helper()
	m1, err1 := abi.ReadManifest(wasm)
	m2, err2 := abi.ReadManifest(head)
	if !reflect.DeepEqual(m1, m2) || (err1 == nil) != (err2 == nil) {
		t.Fatalf("manifest %+v (%v); from the head %+v (%v)", m1, err1, m2, err2)
	}
	n1, e1 := sandbox.ImportsNet(wasm)
	n2, e2 := sandbox.ImportsNet(head)
	if e1 == nil && (n1 != n2 || e2 != nil) {
		t.Fatalf("imports the network: %v (%v); from the head %v (%v)", n1, e1, n2, e2)
	}
	p := sandbox.Policy{Imports: []string{"fd_write"}}
	d1, e1 := p.DeniedImports(wasm)
	d2, e2 := p.DeniedImports(head)
	if e1 == nil && (!reflect.DeepEqual(d1, d2) || e2 != nil) {
		t.Fatalf("denied imports %v (%v); from the head %v (%v)", d1, e1, d2, e2)
	}
}

// A module whose file changes after the start read its head is not run:
// reading its bytes fails when its imports or manifest changed, and
// loading it fails when it has not the digest the start recorded; one
// whose file is unchanged loads.
func TestModuleFileChangedAfterTheStartIsRefused(t *testing.T) {
	wasm, err := os.ReadFile(hostileWasm)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(filepath.Join("..", "examples", "tools", "textstats", "textstats.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	// The same imports and manifest, another digest: a custom section more
	// (with content: wazero refuses one that has only a name).
	grown := append(bytes.Clone(wasm), 0x00, 0x05, 0x03, 'x', 'y', 'z', 0x01)
	for _, tc := range []struct {
		name     string
		recorded bool
		change   func(path string)
		ok       bool
	}{
		{"unchanged, recorded", true, func(string) {}, true},
		{"unchanged, checked", false, func(string) {}, true},
		{"another module, recorded", true, func(p string) { os.WriteFile(p, other, 0o644) }, false},
		{"another module, checked", false, func(p string) { os.WriteFile(p, other, 0o644) }, false},
		{"another digest, recorded", true, func(p string) { os.WriteFile(p, grown, 0o644) }, false},
		{"removed", true, func(p string) { os.Remove(p) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyFile(t, hostileWasm, filepath.Join(dir, "m.wasm"))
			af, ref := &AgentFile{Dir: dir}, ToolRef{Module: "m.wasm"}
			m, err := openModule(af, ref)
			if err != nil || m.file == nil {
				t.Fatalf("open: %v (read apart: %v)", err, m.file != nil)
			}
			if tc.recorded {
				m.file.recorded(digestOf(wasm))
			}
			tc.change(filepath.Join(dir, "m.wasm"))
			d := newDeferredLoad(context.Background(), testRuntime(t), m.bytes)
			d.recorded = m.recorded()
			mod, err := d.Wait(context.Background())
			if tc.ok != (err == nil) || (tc.ok && mod.Digest() != digestOf(wasm)) {
				t.Fatalf("loaded %v, %v; want ok %v", mod != nil, err, tc.ok)
			}
			if !tc.ok && tc.name != "removed" && !errors.Is(err, errModuleChanged) {
				t.Fatalf("error %v, want errModuleChanged", err)
			}
		})
	}
}

// What is not a module's sections is read whole, as before: its errors
// are the whole read's.
func TestModuleFileNotAModuleIsReadWhole(t *testing.T) {
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"text":      []byte("not wasm at all"),
		"truncated": append([]byte("\x00asm\x01\x00\x00\x00"), 0x01, 0x80),
		"past":      append([]byte("\x00asm\x01\x00\x00\x00"), 0x01, 0x7f, 0x00),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := openModuleFile(filepath.Join(dir, name)); ok {
			t.Errorf("%s: read apart", name)
		}
		if _, err := openModule(&AgentFile{Dir: dir}, ToolRef{Module: name}); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
}

// FuzzReadHead: whatever the bytes, readHead does not fail unsafely, and
// of a module whose manifest reads, its head reads the same.
func FuzzReadHead(f *testing.F) {
	for _, p := range []string{filepath.Join("..", "examples", "tools", "textstats", "textstats.wasm")} {
		if b, err := os.ReadFile(p); err == nil {
			if h, ok := readHead(bytes.NewReader(b), int64(len(b))); ok {
				f.Add(h)
			}
		}
	}
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x00\x0f\x0ecairn.manifest"))
	f.Fuzz(func(t *testing.T, b []byte) {
		head, ok := readHead(bytes.NewReader(b), int64(len(b)))
		if _, err := abi.ReadManifest(b); err == nil && !ok {
			t.Fatalf("a module whose manifest reads has no head: %x", b)
		}
		if ok {
			checkHead(t, b, head)
		}
	})
}

// A module file rewritten between a start's look at it and the reading of
// its bytes for a store that lacks them fails the writing of the module,
// which the agent's first commit waits for, rather than storing bytes the
// digest recorded does not name.
func TestModuleFileRewrittenDuringTheStartFailsIt(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("module digests are remembered on Linux only")
	}
	dir, cache := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "m.wasm")
	copyFile(t, hostileWasm, path)
	af, ref := &AgentFile{Dir: dir}, ToolRef{Module: "m.wasm"}
	open := func() toolModule {
		m, err := openModule(af, ref)
		if err != nil || m.file == nil {
			t.Fatalf("open: %v (read apart: %v)", err, m.file != nil)
		}
		m.identity = moduleIdentity(af, ref)
		return m
	}
	first, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := digestEngine(t, cache, first).keepModule(open(), newBlobWrites(first)); err != nil {
		t.Fatal(err)
	}
	m := open() // its identity is remembered with its digest
	wasm, _ := os.ReadFile(path)
	wasm = append(wasm, 0x00, 0x05, 0x03, 'x', 'y', 'z', 0x01) // a custom section more
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	later := newBlobWrites(second)
	digest, err := digestEngine(t, cache, second).keepModule(m, later)
	if err != nil {
		t.Fatal(err)
	}
	if err := later.wait(); !errors.Is(err, errModuleChanged) {
		t.Fatalf("writing the module: %v, want errModuleChanged", err)
	}
	if _, err := second.Blob(digest); err == nil {
		t.Fatal("the store has the digest recorded")
	}
}

// testRuntime is a sandbox runtime on the tests' compile cache.
func testRuntime(t *testing.T) *sandbox.Runtime {
	t.Helper()
	rt, err := sandbox.NewRuntime(context.Background(), sandbox.Config{CacheDir: testCache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}
