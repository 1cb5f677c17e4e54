package sandbox

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
)

// socketImports are the WASI preview 1 functions that only make sense with
// sockets. The sandbox never hands a guest a socket, and a module importing
// them is refused unless its policy names them in Imports.
var socketImports = []string{"sock_accept", "sock_recv", "sock_send", "sock_shutdown"}

// importsAllowed reports whether the policy lets a module import the WASI
// preview 1 function name: the policy's Imports when set, otherwise every
// function but the socket ones.
func (p Policy) importsAllowed(name string) bool {
	if p.Imports != nil {
		for _, n := range p.Imports {
			if n == name {
				return true
			}
		}
		return false
	}
	for _, n := range socketImports {
		if n == name {
			return false
		}
	}
	return true
}

// hostFunctions are the functions the runtime's host modules export (WASI
// preview 1 and the network import), by module and name: what any module
// may at most import, and as what.
func hostFunctions(rt wazero.Runtime) map[[2]string]api.FunctionDefinition {
	defs := map[[2]string]api.FunctionDefinition{}
	for _, mod := range []string{wasi_snapshot_preview1.ModuleName, abi.NetModule} {
		if m := rt.Module(mod); m != nil {
			for name, def := range m.ExportedFunctionDefinitions() {
				defs[[2]string{mod, name}] = def
			}
		}
	}
	return defs
}

// checkImports refuses a module that imports anything but the functions of
// WASI preview 1 (and the network import), or a memory, or one of them
// with a signature other than the host's, naming the first such import:
// wazero would refuse such a module only when it is instantiated, at
// every call, in words that read as a trap.
func checkImports(cm wazero.CompiledModule, host map[[2]string]api.FunctionDefinition) error {
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		def, ok := host[[2]string{mod, name}]
		switch {
		case mod == abi.NetModule && netFunctions[name]:
		case mod != wasi_snapshot_preview1.ModuleName:
			return fmt.Errorf("%w: %s.%s (only %s is available)", errImportDenied, mod, name, wasi_snapshot_preview1.ModuleName)
		case !ok:
			return fmt.Errorf("%w: %s.%s is not a WASI preview 1 function", errImportDenied, mod, name)
		}
		if ok && !sameSignature(f, def) {
			return fmt.Errorf("%w: it imports %s.%s as %s, where the host's is %s", errImportDenied,
				mod, name, signature(f), signature(def))
		}
	}
	for _, m := range cm.ImportedMemories() {
		mod, name, _ := m.Import()
		return fmt.Errorf("%w: memory %s.%s", errImportDenied, mod, name)
	}
	return nil
}

// checkImportKinds refuses a module, wasm, that imports a table or a
// global, naming the first: no host module of cairn exports one, so
// wazero would refuse the module only when it is instantiated, at every
// call, in words that read as a trap. Bytes that do not read are left to
// the compiler to refuse.
func checkImportKinds(wasm []byte) error {
	secs, err := wasmcode.Sections(wasm)
	if err != nil {
		return nil
	}
	r := &wasmcode.Reader{P: secs[wasmcode.SecImport]}
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		mod, name := string(r.Bytes(r.Uvarint())), string(r.Bytes(r.Uvarint()))
		kind := r.Byte()
		r.ImportDesc(kind)
		if what, ok := map[byte]string{0x01: "table", 0x03: "global"}[kind]; ok && r.Err == nil {
			return fmt.Errorf("%w: %s %s.%s (only functions of %s are available)", errImportDenied,
				what, strings.ToValidUTF8(mod, "\uFFFD"), strings.ToValidUTF8(name, "\uFFFD"), wasi_snapshot_preview1.ModuleName)
		}
	}
	return nil
}

// sameSignature reports whether a and b take and return the same types.
func sameSignature(a, b api.FunctionDefinition) bool {
	return slices.Equal(a.ParamTypes(), b.ParamTypes()) && slices.Equal(a.ResultTypes(), b.ResultTypes())
}

// signature is a function's type as "(i32, i64) -> i32", "() -> ()" when
// it takes and returns nothing.
func signature(f api.FunctionDefinition) string {
	names := func(ts []api.ValueType) []string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return s
	}
	results := strings.Join(names(f.ResultTypes()), ", ")
	if len(f.ResultTypes()) != 1 {
		results = "(" + results + ")"
	}
	return "(" + strings.Join(names(f.ParamTypes()), ", ") + ") -> " + results
}

// checkImportsGranted refuses a module whose imports are l when it
// imports a WASI function the policy does not allow, naming every one and
// how to allow it, or the network the policy does not grant.
func checkImportsGranted(l *importList, p Policy) error {
	if p.Net == nil && l.net {
		return fmt.Errorf("%w; grant the module the network (net: in its grant in the agent file, --net for cairn exec)", errNetDenied)
	}
	var denied []string
	for _, name := range l.names {
		if !p.importsAllowed(name) {
			denied = append(denied, name)
		}
	}
	if len(denied) == 0 {
		return nil
	}
	sort.Strings(denied)
	return fmt.Errorf("%w: %s.%s (not in the policy's imports; add it to Policy.Imports to allow it)",
		errImportDenied, wasi_snapshot_preview1.ModuleName, strings.Join(slices.Compact(denied), ", "))
}

// DeniedImports lists, sorted, the WASI preview 1 functions the module
// wasm imports that p does not allow (see Policy.Imports), reading its
// import section without compiling or running it: so that a grant too
// narrow for a module is found when an agent starts, not at its first
// call. Imports of other modules are left to Compile to refuse.
//
// # Errors
//
// An error for bytes whose sections or imports do not read.
func (p Policy) DeniedImports(wasm []byte) ([]string, error) {
	secs, err := wasmcode.Sections(wasm)
	if err != nil {
		return nil, err
	}
	var denied []string
	r := &wasmcode.Reader{P: secs[wasmcode.SecImport]}
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		mod, name := string(r.Bytes(r.Uvarint())), string(r.Bytes(r.Uvarint()))
		kind := r.Byte()
		r.ImportDesc(kind)
		if kind == 0x00 && mod == wasi_snapshot_preview1.ModuleName && !p.importsAllowed(name) {
			denied = append(denied, name)
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	sort.Strings(denied)
	return slices.Compact(denied), nil // a module may import a function twice
}
