// Package ctxio stops a long read when its context is done: a copy or a
// hash of a large file looks at the context before each read, so that it
// ends when its call's time is up rather than at the file's end. It
// imports nothing but the standard library, so any package may use it.
package ctxio

import (
	"context"
	"io"
)

// Reader reads from a reader until a context is done.
type Reader struct {
	ctx context.Context
	r   io.Reader
}

// NewReader reads r until ctx is done.
func NewReader(ctx context.Context, r io.Reader) Reader { return Reader{ctx, r} }

// Read returns the context's error, reading nothing, once it is done, and
// else reads the reader.
func (c Reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
