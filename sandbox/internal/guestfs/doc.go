// Package guestfs is the filesystem a guest sees at a mount of a host
// directory (Dir): every path resolves through an os.Root, so none leads
// outside the directory; links cannot be made; only regular files with
// one name and directories open; a read-only mount refuses every change;
// and a call holds at most its Budget of open files. Its rules are listed
// on Dir and tested, with hostile guests, by sandbox's escape tests. The
// overlay of package sandbox/overlay builds its view of a workspace on
// it.
//
// It is the sandbox's own and no API: only sandbox and its sub-packages
// import it.
package guestfs
