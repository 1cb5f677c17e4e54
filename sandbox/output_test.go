package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
)

// writerModule is a command module whose _start writes out to stdout with
// one fd_write and returns: a tool with no runtime, writing its response
// byte for byte.
func writerModule(out []byte) []byte {
	vec := func(items ...[]byte) []byte {
		b := binary.AppendUvarint(nil, uint64(len(items)))
		for _, it := range items {
			b = append(b, it...)
		}
		return b
	}
	name := func(s string) []byte { return append(binary.AppendUvarint(nil, uint64(len(s))), s...) }
	section := func(id byte, body []byte) []byte {
		return append(append([]byte{id}, binary.AppendUvarint(nil, uint64(len(body)))...), body...)
	}
	// Memory: the iovec {16, len(out)} at 0, nwritten at 8, out at 16.
	data := binary.LittleEndian.AppendUint32(nil, 16)
	data = binary.LittleEndian.AppendUint32(data, uint32(len(out)))
	data = append(append(data, make([]byte, 8)...), out...)
	body := []byte{0, 0x41, 1, 0x41, 0, 0x41, 1, 0x41, 8, 0x10, 0, 0x1a, 0x0b} // fd_write(1, 0, 1, 8); drop
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, section(1, vec([]byte{0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f}, []byte{0x60, 0, 0}))...)
	m = append(m, section(2, vec(append(append(name("wasi_snapshot_preview1"), name("fd_write")...), 0, 0)))...)
	m = append(m, section(3, vec([]byte{1}))...)
	m = append(m, section(5, vec([]byte{0, 1}))...)
	m = append(m, section(7, vec(append(name("memory"), 2, 0), append(name("_start"), 0, 1)))...)
	m = append(m, section(10, vec(append(binary.AppendUvarint(nil, uint64(len(body))), body...)))...)
	seg := append([]byte{0, 0x41, 0, 0x0b}, binary.AppendUvarint(nil, uint64(len(data)))...)
	return append(m, section(11, vec(append(seg, data...)))...)
}

// A module that writes its response by hand with output that is not UTF-8
// — as a text string or as a byte string — answers its call; the model
// reads U+FFFD for each bad sequence. (Such a call once failed whole:
// "cbor: invalid UTF-8 string".)
func TestCallOutputNotUTF8(t *testing.T) {
	text, _ := abi.Marshal(abi.Response{ABI: abi.Version, Output: "caf\xe9 \xff\xfe!"})
	byteString := []byte{0xa2, 0x63, 'a', 'b', 'i', 0x01, 0x66, 'o', 'u', 't', 'p', 'u', 't', 0x44, 'c', 'a', 'f', 0xe9}
	for name, tt := range map[string]struct {
		out  []byte
		want string
	}{
		"text":        {text, "caf\uFFFD \uFFFD!"},
		"byte-string": {byteString, "caf\uFFFD"},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := testRT.Compile(context.Background(), writerModule(tt.out))
			must(t, err)
			res, err := m.Call(context.Background(), Policy{}, abi.Request{ABI: abi.Version, Tool: "t", Input: "{}"})
			if err != nil || res.Response.Output != tt.want || res.Response.Error != "" {
				t.Fatalf("call: %+v, %v; want output %q", res.Response, err, tt.want)
			}
		})
	}
}

// A request larger than the module may read is refused before it runs,
// with the sizes; one that fits runs. (A 20 MiB argument once reached the
// tool cut short, and the model read "decode request: unexpected EOF".)
func TestCallRequestTooLarge(t *testing.T) {
	m, err := testRT.Compile(context.Background(), writerModule(mustMarshal(t, abi.Response{ABI: abi.Version, Output: "ran"})))
	must(t, err)
	big := abi.Request{ABI: abi.Version, Tool: "t", Input: `"` + strings.Repeat("a", 70<<10) + `"`}
	_, err = m.Call(context.Background(), Policy{StdinLimit: 64 << 10}, big)
	if !errors.Is(err, ErrRequestTooLarge) || !strings.Contains(err.Error(), "the tool may read 65536") {
		t.Fatalf("a request past StdinLimit: %v", err)
	}
	res, err := m.Call(context.Background(), Policy{StdinLimit: 128 << 10}, big)
	if err != nil || res.Response.Output != "ran" {
		t.Fatalf("a request within StdinLimit: %+v, %v", res.Response, err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := abi.Marshal(v)
	must(t, err)
	return b
}
