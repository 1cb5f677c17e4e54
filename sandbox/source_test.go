package sandbox

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
)

// Trim puts a fast-mode module's source away, and the call after it reads
// it back whole.
func TestTrimPutsSourceAway(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t)}
	want := probe(t, m, p, `{}`)
	code, data := m.wasm, m.pre.rx.Data
	m.r.bg.Wait()
	m.r.Trim()
	if m.wasm != nil || m.pre.rx.Data != nil || m.src.file == nil {
		t.Fatal("Trim kept the module's source in memory")
	}
	if got := probe(t, m, p, `{}`); !reflect.DeepEqual(got, want) {
		t.Fatalf("a call after Trim answered %+v, before it %+v", got, want)
	}
	if !reflect.DeepEqual(m.wasm, code) || !reflect.DeepEqual(m.pre.rx.Data, data) || m.src.file != nil {
		t.Fatal("the source read back is not the one put away")
	}
}

// A source put away that changed, or is cut short, is refused, not run.
func TestSourceReadBackRefusesDamage(t *testing.T) {
	runs := func() []wasmcode.DataRun {
		return []wasmcode.DataRun{{Off: 16, B: []byte("data")}, {Off: 64, B: []byte("more")}}
	}
	m := &Module{wasm: []byte("\x00asm code"), pre: &preinit{rx: &wasmcode.Reactor{Data: runs()}}}
	for name, damage := range map[string]func(b []byte) []byte{
		"flipped":   func(b []byte) []byte { b[9] ^= 1; return b },
		"truncated": func(b []byte) []byte { return b[:len(b)-3] },
		"grown":     func(b []byte) []byte { return append(b, 0) },
	} {
		t.Run(name, func(t *testing.T) {
			m.putAwaySource(t.TempDir())
			if m.src.file == nil {
				t.Fatal("the source was not put away")
			}
			b := encodeSource([]byte("\x00asm code"), runs())
			b = damage(b)
			must(t, m.src.file.Truncate(0))
			_, err := m.src.file.WriteAt(b, 0)
			must(t, err)
			if _, err := m.code(); !errors.Is(err, errSourceLost) {
				t.Fatalf("read back a damaged source: %v, want errSourceLost", err)
			}
			m.src.file.Close()
			m.src.file = nil
			m.wasm = []byte("\x00asm code")
			m.pre.rx.Data = runs()
		})
	}
}

// decodeSource reads back what encodeSource wrote, and refuses what is
// laid out otherwise.
func TestSourceLayout(t *testing.T) {
	data := []wasmcode.DataRun{{Off: 16, B: []byte("data")}, {Off: 1 << 20, B: []byte{}}}
	b := encodeSource([]byte("code"), data)
	code, got, err := decodeSource(b)
	if err != nil || string(code) != "code" || !reflect.DeepEqual(got, data) {
		t.Fatalf("decoded %q %+v %v", code, got, err)
	}
	for _, bad := range [][]byte{nil, b[:7], b[:len(b)-1], append(b, 1, 2, 3)} {
		if _, _, err := decodeSource(bad); !errors.Is(err, errSourceLost) {
			t.Fatalf("decoded % x without an error", bad)
		}
	}
}
