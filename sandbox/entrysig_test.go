package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
)

// Regression: a module whose _start or _initialize takes arguments, or
// returns results, where WASI has them take and return nothing, compiled,
// and every run of it then failed as "module trapped: expected 1 params,
// but passed 0". It is refused by Compile, naming the export and the type
// it must have.
func TestCompileRefusesEntryOfTheWrongType(t *testing.T) {
	i32 := byte(0x7f)
	for _, tt := range []struct {
		export string
		typ    []byte
	}{
		{"_start", []byte{0x60, 1, i32, 0}},
		{"_start", []byte{0x60, 0, 1, i32}},
		{"_initialize", []byte{0x60, 2, i32, i32, 0}},
	} {
		t.Run(tt.export, func(t *testing.T) {
			body := asmBody(0x0b)
			if len(tt.typ) > 3 && tt.typ[1] == 0 {
				body = asmBody(0x41, 0, 0x0b) // i32.const 0
			}
			var m []byte
			m = append(m, "\x00asm\x01\x00\x00\x00"...)
			m = append(m, asmSection(1, asmVec(tt.typ))...)
			m = append(m, asmSection(3, asmVec([]byte{0}))...)
			m = append(m, asmSection(5, asmVec([]byte{0, 1}))...)
			m = append(m, asmSection(7, asmVec(append(asmName(tt.export), 0, 0), append(asmName("memory"), 2, 0)))...)
			m = append(m, asmSection(10, asmVec(body))...)
			_, err := testRT.Compile(context.Background(), m)
			want := "export " + tt.export + " must be a function of type () -> ()"
			if !errors.Is(err, errInvalidModule) || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v, want errInvalidModule saying %q", err, want)
			}
		})
	}
}

// Regression: a module with nothing to run — no _start and not in the
// fast mode, or a _start that is a global, not a function — compiled,
// and every run of it ended with exit 0, having run nothing. It is
// refused by Compile, saying what it lacks.
func TestCompileRefusesModuleWithNoEntry(t *testing.T) {
	global := asmSection(6, asmVec([]byte{0x7f, 0, 0x41, 0, 0x0b})) // (global i32 (i32.const 0))
	for _, tt := range []struct {
		name    string
		exports [][]byte
		global  bool
		want    string
	}{
		{"none", nil, false, "exports no _start"},
		{"initialize-alone", [][]byte{append(asmName(abi.InitExport), 0, 0)}, false, "exports no _start"},
		{"start-a-global", [][]byte{append(asmName("_start"), 3, 0)}, true, "export _start must be a function of type () -> (), not a global"},
		{"start-the-memory", [][]byte{append(asmName("_start"), 2, 0)}, false, "export _start must be a function of type () -> (), not a memory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var m []byte
			m = append(m, "\x00asm\x01\x00\x00\x00"...)
			m = append(m, asmSection(1, asmVec([]byte{0x60, 0, 0}))...)
			m = append(m, asmSection(3, asmVec([]byte{0}))...)
			m = append(m, asmSection(5, asmVec([]byte{0, 1}))...)
			if tt.global {
				m = append(m, global...)
			}
			m = append(m, asmSection(7, asmVec(append(tt.exports, append(asmName("memory"), 2, 0))...))...)
			m = append(m, asmSection(10, asmVec(asmBody(0x0b)))...)
			_, err := testRT.Compile(context.Background(), m)
			if !errors.Is(err, errInvalidModule) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want errInvalidModule saying %q", err, tt.want)
			}
		})
	}
}
