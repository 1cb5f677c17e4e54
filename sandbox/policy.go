package sandbox

import (
	"context"
	"time"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	"github.com/cairnrun/cairn/sandbox/overlay"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// DefaultTimeout is the Timeout of a Policy that leaves it zero.
const DefaultTimeout = 30 * time.Second

// Defaults for the other zero fields of a Policy; each field's doc says
// its value. Every file a guest opens is a file descriptor of the host
// process, hence defaultMaxOpenFiles.
const (
	defaultMemoryLimit    = 256 << 20
	defaultStdinLimit     = 16 << 20
	defaultStdoutLimit    = 1 << 20
	defaultStderrLimit    = 64 << 10
	defaultMaxOpenFiles   = guestfs.DefaultMaxOpenFiles
	defaultStagingLimit   = guestfs.DefaultStagingLimit
	defaultMaxStagedPaths = guestfs.DefaultMaxStagedPaths
)

// Policy is what one call of a module gets. The zero value grants nothing
// but the defaults: no mounts, no environment, a fixed clock, deterministic
// randomness.
type Policy struct {
	Mounts []Mount
	// MemoryLimit is in bytes, rounded up to 64 KiB pages; zero means
	// 256 MiB.
	MemoryLimit int64
	// Timeout stops the call; zero means DefaultTimeout.
	Timeout time.Duration
	// Caps on what the module reads and writes; past them stdin reads
	// end and output is dropped (and the result says it was truncated).
	// Zero means 16 MiB of stdin, 1 MiB of stdout, 64 KiB of stderr.
	StdinLimit, StdoutLimit, StderrLimit int64
	// Env is exactly the environment the module sees, sorted by name.
	Env map[string]string
	// Args are the arguments after argv[0].
	Args []string
	// RealClock grants the host's wall and monotonic clocks and sleeping;
	// RealRandom grants the host's cryptographic random source.
	RealClock, RealRandom bool
	// Imports are the WASI preview 1 functions (by name, such as
	// "fd_write") a module may import; a module importing any other does
	// not run. Nil allows every WASI preview 1 function but the socket
	// ones (sock_accept, sock_recv, sock_send, sock_shutdown).
	Imports []string
	// MaxOpenFiles bounds the files and directories a call holds open at
	// once across its mounts; past it opening fails with EMFILE. Zero
	// means 256.
	MaxOpenFiles int
	// StagingLimit bounds the bytes a call may stage in each Overlay it
	// has mounted; past it changes fail (see overlay.Overlay.Exhausted).
	// Zero means 256 MiB. Every path a call changes is charged a block
	// (4 KiB) of it besides its bytes, so many small files reach it too.
	StagingLimit int64
	// MaxStagedPaths bounds the paths (files made, written or removed,
	// directories made or removed) a call may change in each Overlay it
	// has mounted; past it changes fail as past StagingLimit. Zero means
	// 10,000.
	MaxStagedPaths int
	// Net carries the call's HTTP exchanges through the network import
	// (abi.NetModule). Nil grants no network: a module importing it does
	// not run.
	Net Net
}

// staging is the bound of what a call may stage in each overlay.
func (p Policy) staging() guestfs.StagingLimit {
	paths := p.MaxStagedPaths
	if paths <= 0 {
		paths = defaultMaxStagedPaths
	}
	return guestfs.StagingLimit{Bytes: orDefault(p.StagingLimit, defaultStagingLimit), Paths: paths}
}

// Mount makes a host directory visible to the guest: HostPath itself, or,
// when Overlay is set, that overlay of a workspace (HostPath is then
// ignored). A read-only overlay mount refuses every change like any
// read-only mount.
type Mount struct {
	HostPath, GuestPath string
	ReadOnly            bool
	Overlay             *overlay.Overlay
}

// open makes the filesystem that serves the mount for one call, whose
// context is ctx, and what releases it.
func (mt Mount) open(ctx context.Context, files *guestfs.Budget, limit guestfs.StagingLimit) (experimentalsys.FS, func() error, error) {
	if mt.Overlay != nil {
		return mt.Overlay.Mount(ctx, mt.ReadOnly, files, limit)
	}
	w, err := guestfs.NewDir(mt.HostPath, mt.ReadOnly, files)
	if err != nil {
		return nil, nil, err
	}
	w.Ctx = ctx
	return w, w.Close, nil
}

func (p Policy) memoryPages() uint32 {
	limit := p.MemoryLimit
	if limit <= 0 {
		limit = defaultMemoryLimit
	}
	pages := (limit + 65535) / 65536
	if pages > 65536 {
		pages = 65536
	}
	return uint32(pages)
}

func orDefault[T int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}
