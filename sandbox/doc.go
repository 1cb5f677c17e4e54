// Package sandbox runs one WebAssembly tool call in a fresh wazero instance
// that cannot reach past the directories it was given, and returns its
// result. It is the only package of cairn that touches wazero.
//
// A Runtime compiles each module once (in memory, and in an on-disk cache
// that only the user can write) and instantiates it anew for every call, so
// no call sees another's memory. A Policy says what one call gets: mounts,
// memory, a deadline, output caps, environment, clock and randomness. What
// it does not grant, the guest does not have: no host directory but its
// mounts, no environment variable but the policy's, a fixed clock and a
// deterministic random stream unless real ones are granted, and no host
// functions but WASI preview 1 (a module importing anything else does not
// load).
//
// Mounts are served by a filesystem of ours built on os.Root, never by
// wazero's WithDirMount, which a guest escapes through a relative symlink
// it creates. See workspaceFS for the rules, and THREAT_MODEL.md at the
// repository root for what the sandbox does and does not stop.
//
// A Runtime and its Modules are safe for concurrent use.
package sandbox
