// Command escape tries every way out of its mounts that a Go guest can
// reach through WASI, and prints what each attempt got, one line each:
// "NAME ok DATA" when it read or wrote something, "NAME refused ERR" when
// it did not. The mount under test is at /work; outside.txt is beside it
// on the host.
package main

import (
	"fmt"
	"os"
)

func try(name string, f func() (string, error)) {
	out, err := f()
	if err != nil {
		fmt.Printf("%s refused %v\n", name, err)
		return
	}
	fmt.Printf("%s ok %q\n", name, out)
}

func read(p string) func() (string, error) {
	return func() (string, error) {
		b, err := os.ReadFile(p)
		return string(b), err
	}
}

func write(p string) func() (string, error) {
	return func() (string, error) { return "", os.WriteFile(p, []byte("pwned"), 0o644) }
}

func main() {
	try("dotdot-read", read("/work/../outside.txt"))
	try("dotdot-sub-read", read("/work/sub/../../outside.txt"))
	try("abs-read", read("/etc/passwd"))
	try("dotdot-write", write("/work/../outside.txt"))
	// Symlinks the guest makes: relative and absolute, to a file and to
	// a directory, then read and written through.
	try("symlink-rel", func() (string, error) { return "", os.Symlink("../outside.txt", "/work/link-rel") })
	try("symlink-rel-read", read("/work/link-rel"))
	try("symlink-rel-write", write("/work/link-rel"))
	try("symlink-dir", func() (string, error) { return "", os.Symlink("..", "/work/link-dir") })
	try("symlink-dir-read", read("/work/link-dir/outside.txt"))
	try("symlink-abs", func() (string, error) { return "", os.Symlink("/etc/passwd", "/work/link-abs") })
	try("symlink-abs-read", read("/work/link-abs"))
	try("hardlink", func() (string, error) { return "", os.Link("/work/inside.txt", "/work/hard") })
	// Links that were already in the workspace, made by the host.
	try("planted-symlink-read", read("/work/planted-link"))
	try("planted-symlink-write", write("/work/planted-link"))
	try("planted-dirlink-read", read("/work/planted-dir/outside.txt"))
	try("planted-hardlink-read", read("/work/planted-hard"))
	try("fifo-read", read("/work/fifo"))
	try("inside-read", read("/work/inside.txt"))
}
