package ctxio

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// A copy through a Reader reads everything while its context lasts, and
// stops at the next read, reading nothing, once it is done.
func TestReaderStopsWhenTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := NewReader(ctx, strings.NewReader("hello"))
	p := make([]byte, 2)
	if n, err := r.Read(p); n != 2 || err != nil {
		t.Fatalf("a read while the context lasts: %d, %v", n, err)
	}
	cancel()
	n, err := io.Copy(io.Discard, r)
	if n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("a copy after the context is done: %d bytes, %v; want none and context.Canceled", n, err)
	}
	all, err := io.ReadAll(NewReader(context.Background(), strings.NewReader("hello")))
	if string(all) != "hello" || err != nil {
		t.Fatalf("a reader read to its end: %q, %v", all, err)
	}
}
