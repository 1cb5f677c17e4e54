// Package abi is the contract between the cairn host and a tool module: the
// version, the messages exchanged on every call, and the manifest a module
// carries. It imports only the standard library, so the host and guests
// share it as a leaf, and a guest that links it stays small. This comment
// is the specification; a tool written in C, Rust or anything else that
// targets WASI preview 1 implements it without reading Go.
//
// # Version
//
// This is ABI version 1 (Version). Every message carries the version it was
// written for in its "abi" field. The host refuses a module whose manifest
// names a newer version than it speaks, and a response that names one.
//
// # The module
//
// A tool module is a WASI preview 1 command module: it exports "_start" and
// "memory" and imports only from "wasi_snapshot_preview1". (Or a reactor in
// the fast mode, below.) One module may carry several tools; the request
// names the one to run.
//
// The host rewrites a module when it loads it, so that it can stop it at
// its deadline: it adds two globals and exports named "cairn.stop" and
// "cairn.fuel", a check at function entries and loop heads, and exports
// a start function as "cairn.start" to call it once it can stop it. What
// the module computes is unchanged. A module that already exports one of
// those names, uses WebAssembly beyond 2.0, or has no memory still runs,
// stopped by the runtime's own slower mechanism. DWARF custom sections are
// dropped, since the rewrite moves the code they point into.
//
// # One call
//
// The host instantiates a fresh instance of the module for every call, so no
// state survives from one call to the next.
//
//  1. The host writes exactly one Request, CBOR-encoded (RFC 8949), to the
//     module's stdin, then closes stdin.
//  2. The module writes exactly one Response, CBOR-encoded, to stdout and
//     exits with status 0. Anything it writes to stderr is its log: the host
//     keeps a capped copy for the user (in the call's tool_end event). The
//     model never reads the log of a call that answered.
//  3. If the module exits non-zero, traps, runs past its deadline or memory
//     limit, or writes stdout that is not one valid Response, the call has
//     failed: the host builds an error result that says so, and the run goes on.
//     When it exited non-zero or ran out of memory, that result ends with the
//     last lines of its log (at most 3 lines, 400 bytes; a Go panic's message
//     and the top of its trace), so that the model can tell a crash on its
//     input from one that is not.
//
// The workspace is a preopened directory at the guest path named in the
// request (WorkspaceDir, "/workspace"). Paths the model passes in arguments are
// relative to it; a tool resolves them against Request.Workspace.
//
// # The fast mode
//
// A module may instead be a WASI reactor that the host initialises once and
// snapshots, so that a call does not pay for the module's initialisation
// (for a Go module, the Go runtime's: milliseconds). It is optional; the
// ABI version is the same, and a command module keeps working unchanged.
// The host detects the fast mode from the module's exports alone: it
// exports "_initialize" (InitExport) and "cairn_call" (CallExport), a
// function of type () -> i32, and does not export "_start".
//
//  1. Once per memory limit and layout of mounts, the host instantiates the
//     module with no arguments but argv[0], no environment, empty stdin,
//     the deterministic clock and randomness, and each mount replaced by an
//     empty read-only directory at the same guest path; calls _initialize;
//     then calls cairn_call once with a request naming no tool (tool "",
//     input "{}"), whose answer it discards: a warm-up, so that what a
//     runtime does on the first call into the module and never again is
//     done once, not in every call. It keeps the instance's linear memory
//     and mutable globals: the snapshot. If the warm-up fails (a non-zero
//     status, a trap), the snapshot is of an instance that only ran
//     _initialize.
//  2. For every call, the host makes a fresh instance whose memory and
//     globals are the snapshot's, with the call's own arguments,
//     environment, clock, randomness, stdin, stdout, stderr and mounts, and
//     calls cairn_call once. cairn_call does what a command module's
//     _start does in steps 1-3 above, and returns the exit status instead
//     of exiting (it may also call proc_exit).
//
// So a call sees the snapshot's memory, never another call's; and whatever
// the module read or computed in _initialize or the warm-up is the same for
// every call. A module must answer a request naming no tool without
// changing what later calls depend on (the guest package answers it with
// an error, running no tool).
// A module must therefore read arguments, environment, clocks and
// randomness in cairn_call, not in _initialize, and keep no file open from
// _initialize. The snapshot holds memory and globals only: a module whose
// _initialize changes its table is not restored faithfully. A call granted
// real randomness is not started from the snapshot but initialised afresh,
// so that seeds a runtime draws at initialisation (Go's map order and
// math/rand) are its own.
//
// With the argument --cairn-manifest (ManifestFlag), cairn_call writes the
// manifest, as _start does. A Go tool gets all this from the guest package
// by building with -buildmode=c-shared.
//
// # Messages
//
// Messages are CBOR maps with text-string keys, the keys being the names given
// in the struct tags below. Decoders ignore keys they do not know, so a
// newer minor field never breaks an older tool. Integers are unsigned or
// negative CBOR integers; strings are UTF-8 text strings. Write definite
// lengths and no tags: the host refuses indefinite lengths, tags, a key
// written twice or in another case than the one given here, nesting deeper
// than 16, and an array or map of more than 65,536 items.
//
// Request (host to module):
//
//	abi        uint    ABI version of the host (1)
//	tool       text    which of the module's tools to run
//	call_id    text    the call's id, stable across restarts of the host
//	input      text    the arguments as JSON text, already validated by the
//	                   host against the tool's input_schema
//	workspace  text    guest path of the workspace directory
//
// Response (module to host):
//
//	abi        uint    ABI version the module was built for
//	output     text    the result shown to the model
//	error      text    when present and non-empty the call failed; the text
//	                   says why, in words the model can act on
//
// A Response's output and error should be UTF-8 text. The host also takes
// text that is not UTF-8, and byte strings, and replaces each byte
// sequence that is not UTF-8 with U+FFFD before the model reads it; the
// guest package makes them UTF-8 so before it writes them. Such output is
// never a failed call.
//
// # The manifest
//
// A module describes itself in a custom section named "cairn.manifest"
// (ManifestSection) whose content is one CBOR-encoded Manifest. The host
// reads it without running the module: listing and inspecting tools never
// executes untrusted code.
//
//	abi          uint     ABI version the module was built for
//	tools        array    one map per tool:
//	  name         text     the tool's name, unique in the agent: [a-z0-9_]{1,64}
//	  description  text     what it does, for the model
//	  input_schema text     JSON Schema (draft 2020-12) of the arguments, as JSON text
//	  mutates      bool     whether it changes the workspace
//	  idempotent   bool     whether running it twice has the effect of once
//	  needs        map      what the tool asks of the sandbox:
//	    workspace    text     "" (none), "ro" (read-only) or "rw" (read-write)
//	    env          array    names of environment variables it wants
//	    clock        bool     the real wall clock (otherwise a fixed, deterministic one)
//	    random       bool     real randomness (otherwise a deterministic stream)
//
//	    net          array    what it reaches through the network import, in
//	                          the form of a grant's allow entries
//	                          ("api.example.com", "*.example.org:443", "*")
//
// A tool gets what its manifest asks for and the agent file grants. A tool
// that asks for more than is granted is refused when it is loaded.
//
// A Go tool built with cairn's guest package answers the command-line
// argument "--cairn-manifest" (ManifestFlag) by writing its Manifest, CBOR
// encoded, to stdout; `cairn tools pack` uses that, once, at build time, to
// write the section. Tools in other languages may instead give `cairn tools
// pack` the manifest as a JSON file.
//
// # The network
//
// A module reaches the network only through the host import module
// "cairn_net" (NetModule), one HTTP exchange at a time, and only when its
// grant has a network part; a module that imports it without one is
// refused when its agent starts. The host checks every request against
// the grant, sends it itself, and journals it (see docs/network.md). Two
// functions, both (i32, i32) -> i32:
//
//	round_trip(req_ptr, req_len)  (NetRoundTrip)
//	    req_ptr..req_ptr+req_len holds one CBOR HTTPRequest. The host sends
//	    it and returns the length in bytes of its CBOR HTTPResponse, which
//	    it keeps for response. A request outside the module's memory traps.
//	response(buf_ptr, buf_len)    (NetResponse)
//	    copies that HTTPResponse to buf_ptr and returns its length, or -1
//	    when there is none or buf_len is smaller; the host then forgets it.
//
// So a module calls round_trip, allocates the length it returned, and
// calls response. Every failure is an HTTPResponse whose error is set,
// never a trap: a request the grant refuses, a limit, a connection that
// failed, no response in time.
//
// HTTPRequest (module to host), a CBOR map:
//
//	abi     uint    ABI version of the module (1)
//	method  text    GET, POST...
//	url     text    absolute http or https URL, without credentials
//	header  map     text -> array of text
//	body    bytes   the request body
//
// HTTPResponse (host to module):
//
//	abi     uint    ABI version of the host (1)
//	status  uint    the HTTP status; absent when error is set
//	header  map     text -> array of text
//	body    bytes   the whole response body
//	error   text    when set, there is no response, and this says why
//
// Its text is UTF-8: a header's name or value that a server sent with
// bytes that are not UTF-8 (HTTP's obs-text, as a Latin-1 file name in
// Content-Disposition) is sent with each of those bytes read as the
// Latin-1 character of that number, U+0080 to U+00FF (HeaderText), so a
// module that wants the bytes back writes each character as one byte.
// DecodeHTTPResponse also takes text that is not UTF-8 there, and byte
// strings, reading a header's text by HeaderText and the error's by
// ValidText, as hosts before this rule sent it.
//
// The host does not follow redirects: a 3xx is the response, and the
// module follows it, if it will, with a new request, which the grant
// checks again. A message is at most MaxNetMessage bytes. Requests run one
// at a time per call. Go tools get all this from guest/nethttp, an
// http.RoundTripper.
package abi
