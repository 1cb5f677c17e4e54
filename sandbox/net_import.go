package sandbox

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
)

// netFunctions are the functions of the network import, abi.NetModule.
var netFunctions = map[string]bool{abi.NetRoundTrip: true, abi.NetResponse: true}

// instantiateNet adds the network import to a runtime:
//
//	round_trip(req_ptr, req_len i32) -> i32
//	    sends the CBOR abi.HTTPRequest at req_ptr through the call's Net;
//	    returns the length of the CBOR abi.HTTPResponse it keeps for
//	    response to copy out (an error is a response with Error set)
//	response(buf_ptr, buf_len i32) -> i32
//	    copies that response to buf_ptr and forgets it; returns its
//	    length, or -1 when there is none or buf_len is too small
//
// A request outside the guest's memory traps.
func instantiateNet(ctx context.Context, rt wazero.Runtime) error {
	i32 := api.ValueTypeI32
	_, err := rt.NewHostModuleBuilder(abi.NetModule).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(roundTrip), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("req_ptr", "req_len").Export(abi.NetRoundTrip).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(copyResponse), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("buf_ptr", "buf_len").Export(abi.NetResponse).
		Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("instantiate %s: %w", abi.NetModule, err)
	}
	return nil
}

func roundTrip(ctx context.Context, mod api.Module, stack []uint64) {
	ptr, n := uint32(stack[0]), uint32(stack[1])
	if n > abi.MaxNetMessage {
		stack[0] = uint64(uint32(len(tooLarge(ctx, n))))
		return
	}
	b, ok := mod.Memory().Read(ptr, n)
	if !ok {
		panic(fmt.Errorf("%s.%s: request at %d+%d is outside the module's memory", abi.NetModule, abi.NetRoundTrip, ptr, n))
	}
	stack[0] = uint64(uint32(len(exchange(ctx, append([]byte(nil), b...)))))
}

func copyResponse(ctx context.Context, mod api.Module, stack []uint64) {
	ptr, n := uint32(stack[0]), uint32(stack[1])
	nc, _ := ctx.Value(netKey{}).(*netCall)
	fail := uint64(0xffffffff) // -1 as an i32
	if nc == nil || nc.pending == nil || uint32(len(nc.pending)) > n {
		stack[0] = fail
		return
	}
	if !mod.Memory().Write(ptr, nc.pending) {
		panic(fmt.Errorf("%s.%s: buffer at %d+%d is outside the module's memory", abi.NetModule, abi.NetResponse, ptr, n))
	}
	stack[0] = uint64(uint32(len(nc.pending)))
	nc.pending = nil
}

// ImportsNet reports whether the module wasm imports the network
// (abi.NetModule), reading its import section without compiling or
// running it: so that a module without a network grant is refused when
// an agent starts.
//
// # Errors
//
// An error for bytes whose sections or imports do not read.
func ImportsNet(wasm []byte) (bool, error) {
	secs, err := wasmcode.Sections(wasm)
	if err != nil {
		return false, err
	}
	r := &wasmcode.Reader{P: secs[wasmcode.SecImport]}
	found := false
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		mod := string(r.Bytes(r.Uvarint()))
		r.Bytes(r.Uvarint())
		r.ImportDesc(r.Byte())
		found = found || mod == abi.NetModule
	}
	return found, r.Err
}
