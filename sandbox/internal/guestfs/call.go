package guestfs

import "context"

// call is what one call's filesystems tell its WASI functions: the
// errnos wazero cannot name (Unnamed) and the directories the guest holds
// (Dirs). Both are made with the call, in one allocation, and found in
// its context with one lookup each.
type call struct {
	unnamed Unnamed
	dirs    Dirs
}

type callKey struct{}

// WithCall is ctx carrying a new Unnamed and a new Dirs, for one call's
// filesystems and WASI functions (UnnamedOf, DirsOf).
func WithCall(ctx context.Context) context.Context {
	return context.WithValue(ctx, callKey{}, &call{})
}

// callOf is the call ctx carries, or nil.
func callOf(ctx context.Context) *call {
	if ctx == nil {
		return nil
	}
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}
