package wasmcode

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
)

// FuzzBoundTables: whatever the bytes, BoundTables never panics; a
// module it returns reads back, its tables within the bounds, and wazero
// takes it whenever it took the module given.
func FuzzBoundTables(f *testing.F) {
	for _, wasm := range watModules(f) {
		f.Add(wasm)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	const maxTables, maxEntries = 4, 1000
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, err := BoundTables(wasm, maxTables, maxEntries)
		if err != nil {
			return
		}
		secs, err := Sections(out)
		if err != nil {
			t.Fatalf("bounded module does not read back: %v", err)
		}
		tables, err := readTables(secs[SecTable])
		if err != nil {
			t.Fatalf("bounded tables do not read back: %v", err)
		}
		var most uint64
		for _, tb := range tables {
			if !tb.hasMax {
				t.Fatalf("a table is left without a maximum: %+v", tb)
			}
			most += tb.max
		}
		if len(tables) > maxTables || most > maxEntries {
			t.Fatalf("%d tables that may hold %d entries, past %d and %d", len(tables), most, maxTables, maxEntries)
		}
		if m, err := rt.CompileModule(ctx, wasm); err == nil {
			m.Close(ctx)
			m, err := rt.CompileModule(ctx, out)
			if err != nil {
				t.Fatalf("wazero takes the module but not its bounded one: %v", err)
			}
			m.Close(ctx)
		}
	})
}
