package sandbox

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/guest/builtin"
)

// BenchmarkEngine times, on the compiler and on the interpreter in the same
// run, a read_file call of the built-in tools (warm: the module compiled,
// its snapshot taken, a spare instance made between calls) and readying
// the module cold (compile/…: a new runtime with an empty compile cache;
// for the compiler, compile-apart is the same compiled in a process of its
// own into the cache, then loaded, as auto does with little memory).
//
//	go test ./sandbox -run '^$' -bench Engine -benchtime 200x
//	go test ./sandbox -run '^$' -bench 'Engine/compile' -benchtime 3x
func BenchmarkEngine(b *testing.B) {
	ctx := context.Background()
	_, p, req := readFileCall(b)
	for _, e := range []Engine{EngineCompiler, EngineInterpreter} {
		b.Run("call/"+string(e), func(b *testing.B) {
			r, err := NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache"), Engine: e})
			must(b, err)
			defer r.Close(ctx)
			m, err := r.Compile(ctx, builtin.Module)
			must(b, err)
			between := betweenCalls(r, "ready")
			pacedTimed(b, between, func() {
				if res, err := m.Call(ctx, p, req); err != nil || res.Response.Error != "" {
					b.Fatal(err, res.Response.Error)
				}
			})
		})
	}
	compile := func(e Engine, apart bool) func(b *testing.B) {
		return func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r, err := NewRuntime(ctx, Config{CacheDir: b.TempDir(), Engine: e})
				must(b, err)
				if apart {
					r.memoryLimit = func() (int64, bool) { return 128 << 20, true }
				}
				if _, err := r.Compile(ctx, builtin.Module); err != nil {
					b.Fatal(err)
				}
				r.Close(ctx)
			}
		}
	}
	b.Run("compile/compiler", compile(EngineCompiler, false))
	b.Run("compile/compile-apart", compile(EngineAuto, true))
	b.Run("compile/interpreter", compile(EngineInterpreter, false))
}
