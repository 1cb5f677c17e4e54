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
// On Linux, guest memory is reserved up front and committed as it grows
// (see memoryAllocator), so a guest's memory costs the host at most its
// limit and is never copied.
//
// A Runtime and its Modules are safe for concurrent use.
package sandbox
