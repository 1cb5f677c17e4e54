package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
)

// netOOB is a module written out byte by byte (no assembler needed): it
// imports cairn_net.round_trip and its _start calls it with a request
// that runs past the end of its one page of memory.
//
//	(module
//	  (import "cairn_net" "round_trip" (func (param i32 i32) (result i32)))
//	  (memory (export "memory") 1)
//	  (func (export "_start") (drop (call 0 (i32.const 65530) (i32.const 100)))))
var netOOB = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x01, 0x0a, 0x02, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x00, // types
	0x02, 0x18, 0x01, 0x09, 'c', 'a', 'i', 'r', 'n', '_', 'n', 'e', 't', // import
	0x0a, 'r', 'o', 'u', 'n', 'd', '_', 't', 'r', 'i', 'p', 0x00, 0x00,
	0x03, 0x02, 0x01, 0x01, // functions
	0x05, 0x03, 0x01, 0x00, 0x01, // memory
	0x07, 0x13, 0x02, 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x01, // exports
	0x0a, 0x0e, 0x01, 0x0c, 0x00, 0x41, 0xfa, 0xff, 0x03, 0x41, 0xe4, 0x00, 0x10, 0x00, 0x1a, 0x0b, // code
}

// countingNet counts the requests it is given.
type countingNet struct{ n int }

func (c *countingNet) RoundTrip(context.Context, *NetRequest) (*NetResponse, error) {
	c.n++
	return &NetResponse{Status: 200}, nil
}

// A module that imports the network compiles, does not run without a
// Net, and traps when it hands the host a request outside its memory,
// which never reaches the Net.
func TestNetImport(t *testing.T) {
	ctx := context.Background()
	m, err := testRT.Compile(ctx, netOOB)
	if err != nil {
		t.Fatal(err)
	}
	if imports, err := ImportsNet(netOOB); err != nil || !imports {
		t.Fatalf("ImportsNet = %v, %v", imports, err)
	}
	if imports, _ := ImportsNet(watBytes["loop"]); imports {
		t.Fatal("a module without the import is said to have it")
	}
	var out bytes.Buffer
	if _, err := m.Run(ctx, Policy{}, nil, &out, &out); !errors.Is(err, errNetDenied) || !errors.Is(err, errImportDenied) {
		t.Fatalf("run without a Net: %v", err)
	}
	n := &countingNet{}
	if _, err := m.Run(ctx, Policy{Net: n}, nil, &out, &out); !errors.Is(err, errTrap) || n.n != 0 {
		t.Fatalf("a request outside memory: %v, %d requests", err, n.n)
	}
}

// Regression: a request message past abi.MaxNetMessage, which a module
// not built on guest/nethttp may hand the import, was answered "decode
// HTTP request: empty message", though the module had sent 16 MiB. It is
// answered with its size and the limit, and never reaches the Net.
func TestNetRequestPastTheMessageLimitSaysSo(t *testing.T) {
	ctx := context.Background()
	m, err := testRT.Compile(ctx, guestBytes["netbig"])
	if err != nil {
		t.Fatal(err)
	}
	n := &countingNet{}
	var out bytes.Buffer
	if _, err := m.Run(ctx, Policy{Net: n}, nil, &out, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	want := fmt.Sprintf("a request message of %d bytes, more than the %d one may have", abi.MaxNetMessage+1, abi.MaxNetMessage)
	if !strings.Contains(out.String(), want) || n.n != 0 {
		t.Fatalf("the module was told %q (%d requests reached the Net); want it to say %q", out.String(), n.n, want)
	}
}
