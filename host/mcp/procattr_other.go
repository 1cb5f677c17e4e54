//go:build !linux

package mcp

import "syscall"

// serverProcAttr starts a command server in a process group of its own:
// a signal to cairn's group is cairn's to act on. (Only Linux can have a
// server signalled when cairn dies.)
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
