package sandbox

import (
	"bytes"
	"context"
	"io"
	"strings"
)

// stdinFor is what the guest reads as stdin: r, capped at limit, and, when
// r may block (a pipe, a terminal), read so that the call's deadline still
// holds while the guest waits in a read. wazero stops a guest only between
// instructions, never inside a host call, so a guest blocked reading a
// terminal would otherwise outlive its deadline.
func stdinFor(ctx context.Context, r io.Reader, limit int64) io.Reader {
	switch r.(type) {
	case nil:
		return bytes.NewReader(nil)
	case *bytes.Reader, *strings.Reader:
	default:
		r = &ctxReader{ctx: ctx, r: r, done: make(chan readResult, 1)}
	}
	return io.LimitReader(r, limit)
}

// ctxReader reads r in a goroutine, into a buffer of its own (never the
// guest's memory, which may be freed before a late read returns), and gives
// up when ctx is done. A read given up on finishes in the background and
// its bytes are dropped.
type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	done chan readResult
	err  error
}

type readResult struct {
	b   []byte
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	go func(buf []byte) {
		n, err := c.r.Read(buf)
		c.done <- readResult{buf[:n], err}
	}(make([]byte, min(len(p), 64<<10)))
	select {
	case res := <-c.done:
		return copy(p, res.b), res.err
	case <-c.ctx.Done():
		c.err = c.ctx.Err()
		return 0, c.err
	}
}
