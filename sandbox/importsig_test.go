package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
)

// importingWasm assembles a module that imports mod.name as a function of
// type typ (a function type's bytes, 0x60 …) and has an empty _start.
func importingWasm(mod, name string, typ []byte) []byte {
	var m []byte
	m = append(m, "\x00asm\x01\x00\x00\x00"...)
	m = append(m, asmSection(1, asmVec(typ, []byte{0x60, 0, 0}))...)
	m = append(m, asmSection(2, asmVec(append(append(asmName(mod), asmName(name)...), 0, 0)))...)
	m = append(m, asmSection(3, asmVec([]byte{1}))...)
	m = append(m, asmSection(7, asmVec(append(asmName("_start"), 0, 1)))...)
	m = append(m, asmSection(10, asmVec(asmBody(0x0b)))...)
	return m
}

// Regression: a module importing a host function with a signature other
// than the host's (fd_write as (i32) -> i32, proc_exit taking an i64)
// compiled, and every call of it then failed as "module trapped: import
// func[wasi_snapshot_preview1.fd_write]: signature mismatch", as if the
// tool had trapped running. It is refused by Compile, naming the import,
// the signature it asks for and the host's.
func TestCompileRefusesImportOfTheWrongSignature(t *testing.T) {
	i32, i64 := byte(0x7f), byte(0x7e)
	for _, tt := range []struct {
		mod, name string
		typ       []byte
		want      string
	}{
		{"wasi_snapshot_preview1", "fd_write", []byte{0x60, 1, i32, 1, i32},
			"wasi_snapshot_preview1.fd_write as (i32) -> i32, where the host's is (i32, i32, i32, i32) -> i32"},
		{"wasi_snapshot_preview1", "proc_exit", []byte{0x60, 1, i64, 0},
			"wasi_snapshot_preview1.proc_exit as (i64) -> (), where the host's is (i32) -> ()"},
		{abi.NetModule, abi.NetRoundTrip, []byte{0x60, 2, i32, i32, 0},
			abi.NetModule + "." + abi.NetRoundTrip + " as (i32, i32) -> (), where the host's is (i32, i32) -> i32"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := testRT.Compile(context.Background(), importingWasm(tt.mod, tt.name, tt.typ))
			if !errors.Is(err, errImportDenied) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want errImportDenied saying %q", err, tt.want)
			}
		})
	}
	// The host's own signature compiles.
	if _, err := testRT.Compile(context.Background(), importingWasm("wasi_snapshot_preview1", "proc_exit", []byte{0x60, 1, i32, 0})); err != nil {
		t.Fatalf("proc_exit as the host has it: %v", err)
	}
}

// Regression: a module importing a global or a table (which no host
// module of cairn exports) compiled, and every call of it then failed as
// "module trapped: module[env] not instantiated". It is refused by
// Compile, naming the import, as an import of any other function is.
func TestCompileRefusesImportOfAGlobalOrTable(t *testing.T) {
	for _, tt := range []struct {
		what string
		desc []byte // the import's kind and type
		want string
	}{
		{"global", []byte{0x03, 0x7f, 0x00}, "global env.x"},
		{"table", []byte{0x01, 0x70, 0x00, 0x01}, "table env.x"},
		{"global of WASI's", []byte{0x03, 0x7f, 0x00}, "global wasi_snapshot_preview1.x"},
	} {
		t.Run(tt.what, func(t *testing.T) {
			mod := "env"
			if strings.Contains(tt.what, "WASI") {
				mod = "wasi_snapshot_preview1"
			}
			var m []byte
			m = append(m, "\x00asm\x01\x00\x00\x00"...)
			m = append(m, asmSection(1, asmVec([]byte{0x60, 0, 0}))...)
			m = append(m, asmSection(2, asmVec(append(append(asmName(mod), asmName("x")...), tt.desc...)))...)
			m = append(m, asmSection(3, asmVec([]byte{0}))...)
			m = append(m, asmSection(7, asmVec(append(asmName("_start"), 0, 0)))...)
			m = append(m, asmSection(10, asmVec(asmBody(0x0b)))...)
			_, err := testRT.Compile(context.Background(), m)
			if !errors.Is(err, errImportDenied) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want errImportDenied naming %q", err, tt.want)
			}
		})
	}
}
