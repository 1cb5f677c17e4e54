package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
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
