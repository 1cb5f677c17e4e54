// Package sandbox runs one WebAssembly tool call in a fresh wazero instance
// that cannot reach past the directories it was given, and returns its
// result. It is the only package of cairn that touches wazero.
//
// # The runtime
//
// NewRuntime makes a Runtime from a Config: where the compiled modules are
// cached on disk (a directory only the user can write), which engine runs
// them (EngineAuto, EngineCompiler, EngineInterpreter; ParseEngine reads
// one from a flag), and how large a module it compiles (a module past
// Config's size, function-count or function-size limit is refused before
// it is decoded, and compiling stops at Config.CompileTimeout:
// ErrCompileLimit). Compile compiles a module once, and Load does it in
// the background for a caller with other work to do meanwhile (Loading).
// The cache is only a cache: a module whose entry in it is damaged, or
// that it cannot write, is compiled again (see cachedir.go), and a call
// fails on it only when the entry is damaged and cannot be rewritten.
// The cache is kept under Config.CacheMax, the modules used least
// recently removed first (never one the Runtime loaded), and TrimCache
// reclaims it at once (see cachetrim.go).
// A program that makes a Runtime calls ServeCompile first thing in main:
// where memory is short, EngineAuto compiles a module in a child process,
// the program's own executable.
//
//	sandbox.ServeCompile()
//	rt, err := sandbox.NewRuntime(ctx, sandbox.Config{CacheDir: dir})
//	defer rt.Close(ctx)
//	mod, err := rt.Compile(ctx, wasm)
//
// # The policy
//
// A Policy says what one call gets; the zero value grants nothing but the
// defaults. What it does not grant, the guest does not have: no host
// directory but its Mounts, no environment variable but its Env, a fixed
// clock and a deterministic random stream unless RealClock and RealRandom
// are set, no host functions but WASI preview 1 without sockets (Imports
// narrows them; a module importing anything else does not run, and the
// error names the import), no network without a Net, and bounds on
// memory, time, stdin and output, open files and staged changes. Policy.DeniedImports and ImportsNet read a module's
// imports without running it, so that a grant too narrow is found when an
// agent starts.
//
// # A call and its result
//
// Module.Call sends a tool call (an abi.Request) to the module on stdin
// and reads its abi.Response from stdout: a CallResult, with what the
// module logged on stderr, whether the cap cut that, and how long it ran. Module.Run and
// Runtime.Exec run a module as a WASI command instead, with stdin, stdout
// and stderr passed through; a non-zero exit is in Exit.Code, not an
// error. A call fails with an error that says what happened: a trap, a
// module out of memory, a non-zero exit with the end of its log, a
// response that does not read; those a caller branches on are wrapped:
// ErrDeadline, ErrRequestTooLarge, ErrCompileLimit and
// overlay.ErrStagingLimit. Module.Describe runs the module once to ask for
// its manifest, for packing it at build time.
//
//	res, err := mod.Call(ctx, sandbox.Policy{Mounts: []sandbox.Mount{
//		{HostPath: dir, GuestPath: "/work", ReadOnly: true}}}, req)
//
// # Mounts and overlays
//
// A Mount makes a host directory visible to the guest through a filesystem
// of ours built on os.Root, never wazero's WithDirMount, which a guest
// escapes through a relative symlink it creates: no symlink or hard link
// can be made; symlinks already in a mount are followed only while they
// stay inside it; a regular file with more than one name (a hard link,
// whose other name may be outside) is never opened; only regular files and
// directories open, without ever blocking on a FIFO or device; a read-only
// mount refuses every change. docs/threat-model.md says what the sandbox
// does and does not stop, with measured figures.
//
// A mount may be an overlay of a workspace instead (Mount.Overlay, package
// sandbox/overlay): the call reads through to the workspace, and its
// writes, deletions and renames are staged in a directory of its own.
// After the call the overlay's Effects list them, and the host journals
// them, checks them against the workspace and applies them crash-safely,
// so that a call's result is durable before its changes land.
//
// # Inside
//
// A module is rewritten when it loads so that the host can stop it at its
// deadline from outside: it counts down at function entries and loop
// heads, and every few thousand checks looks at a stop global only the
// host can set and steps into Go, where the Go runtime can pause it for a
// garbage collection (sandbox/internal/wasmcode). A Go tool built as a
// WASI reactor is initialised once per memory limit and mount layout, and
// every call starts a fresh instance from a snapshot of that initialised
// state (see preinit), in memory that holds exactly the snapshot's bytes,
// kept mapped and reset between instances (see memoryImage); the instances
// for the next calls of a like policy, as many as its calls ran at once,
// are made in the background (see spare). Runtime.Trim lets them go, and
// the snapshots, the compiled code the compile cache holds and the
// modules' source, for a process about to wait for a person.
// A plain command module initialises in every call. On Linux, guest memory
// is reserved up front and committed as it grows, so a guest's memory
// costs the host at most its limit and is never copied. The public WASI
// testsuite runs as a test (docs/wasi.md).
//
// A Runtime and its Modules are safe for concurrent use.
package sandbox
