package mcp

import "syscall"

// serverProcAttr starts a command server in a process group of its own
// (a signal to cairn's group is cairn's to act on) and has the kernel
// send it SIGTERM when cairn dies: a server busy in a call reads no end
// of its stdin, and would otherwise outlive a cairn killed with kill -9.
// The signal is the one cairn sends a server that its stdin's end did
// not stop (see process.Close). (Linux sends it when the thread that
// started the server ends; cairn locks no goroutine to a thread, so its
// threads end only with it.)
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
