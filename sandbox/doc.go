// Package sandbox runs one WebAssembly tool call in a fresh wazero instance
// that cannot reach past the directories it was given, and returns its
// result. It is the only package of cairn that touches wazero.
//
// A Runtime compiles each module once (in memory, and in an on-disk cache
// that only the user can write) and instantiates it anew for every call, so
// no call sees another's memory. A Policy says what one call gets: mounts,
// memory, a deadline, output caps, environment, clock and randomness, the
// WASI functions it may import, how many files it may hold open. What it
// does not grant, the guest does not have: no host directory but its
// mounts, no environment variable but the policy's, a fixed clock and a
// deterministic random stream unless real ones are granted, and no host
// functions but WASI preview 1 without sockets (a module importing anything
// else does not load, and the error names the import).
//
// A module is rewritten when it loads so that the host can stop it at its
// deadline from outside: it counts down at function entries and loop
// heads, and every few thousand checks looks at a stop global only the host
// can set and steps into Go, where the Go runtime can pause it for a
// garbage collection (see wasmcode.WithStopChecks).
//
// Mounts are served by a filesystem of ours built on os.Root, never by
// wazero's WithDirMount, which a guest escapes through a relative symlink
// it creates. Its rules: no symlink or hard link can be made; symlinks
// already in a mount are followed only while they stay inside it; a
// regular file with more than one name (a hard link, whose other name may
// be outside) is never opened; only regular files and directories open,
// without ever blocking on a FIFO or device; a read-only mount refuses
// every change. See workspaceFS, and docs/threat-model.md for what the
// sandbox does and does not stop, with measured figures.
//
// A mount may be an Overlay of a workspace instead: the call reads through
// to the workspace, and its writes, deletions and renames are staged in a
// directory of its own. Effects lists them (paths, operations, hashes of
// what the call saw and what it left), Check says which no longer fit the
// workspace, and Apply makes them real crash-safely and idempotently, so
// the host can journal a call's result before its changes land and finish
// an apply a crash cut short; Discard then removes the staging directory.
// Reads lists the files the call read. An overlay made without a staging
// directory, for a call that may only read, refuses every change. What a
// call may stage is bounded in bytes and in paths (Policy.StagingLimit,
// Policy.MaxStagedPaths); a call past either fails with ErrStagingLimit.
//
// Compiling is bounded too: a module past Config's size, function-count
// or function-size limit is refused before it is decoded, and compiling
// stops at Config.CompileTimeout (ErrCompileLimit). The public WASI
// testsuite runs as a test (docs/wasi.md).
//
// A Go tool built as a WASI reactor is initialised once per memory limit
// and mount layout, and every call starts a fresh instance from a
// snapshot of that initialised state (see preinit), in memory that holds
// exactly the snapshot's bytes, kept mapped and reset between instances
// (see memoryImage); the instances for the next calls of a like policy,
// as many as its calls ran at once, are made in the background (see
// spare). A plain command module initialises in every call. Load compiles
// a module in the background, for a caller with other work to do
// meanwhile.
//
// On Linux, guest memory is reserved up front and committed as it grows
// (see memoryAllocator), so a guest's memory costs the host at most its
// limit and is never copied.
//
// A Runtime and its Modules are safe for concurrent use.
package sandbox
