package guestfs

import "context"

// call is what one call's filesystems tell its WASI functions: the
// errnos wazero cannot name (Unnamed) and the directories the guest holds
// (Dirs); and what those tell the filesystems of the function called: not
// to follow the symlink its path names (WithoutFollowing). They are made
// with the call, in one allocation, and found in its context with one
// lookup each.
type call struct {
	unnamed  Unnamed
	dirs     Dirs
	noFollow bool
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

// WithoutFollowing runs set, wazero's setting of a path's times through
// its filesystem's Utimens, with the call's filesystems told to set the
// times of a symlink the path names, not of what it leads to, as
// utimensat(2) with AT_SYMLINK_NOFOLLOW does (path_filestat_set_times
// without LOOKUP_SYMLINK_FOLLOW). It reports false, and does not run set,
// when ctx carries no call (see WithCall). A WASI preview 1 guest has one
// thread, which is in set.
func WithoutFollowing(ctx context.Context, set func()) bool {
	c := callOf(ctx)
	if c == nil {
		return false
	}
	c.noFollow = true
	defer func() { c.noFollow = false }()
	set()
	return true
}

// Following reports whether the symlink a path names is followed: false
// inside WithoutFollowing.
func Following(ctx context.Context) bool {
	c := callOf(ctx)
	return c == nil || !c.noFollow
}
