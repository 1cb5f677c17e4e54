// Command fsprog is an ordinary WASI program that lists, reads and writes
// files under the directory named by its first argument, prints what it
// did, and exits with the status named by its second argument (default 0).
// The sandbox's tests run it under cairn and under wazero's own mounts and
// compare.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

func check(what string, err error) {
	if err != nil {
		fmt.Printf("%s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	dir := os.Args[1]
	check("write", os.WriteFile(filepath.Join(dir, "new.txt"), []byte("written by fsprog\n"), 0o644))
	check("mkdir", os.MkdirAll(filepath.Join(dir, "made", "deeper"), 0o755))
	check("rename", os.Rename(filepath.Join(dir, "new.txt"), filepath.Join(dir, "made", "moved.txt")))
	f, err := os.OpenFile(filepath.Join(dir, "log.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	check("open log", err)
	fmt.Fprintln(f, "appended")
	check("close log", f.Close())
	check("remove", os.Remove(filepath.Join(dir, "gone.txt")))
	check("walk", filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", p, fi.Mode().Type())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %d %q", fi.Size(), b)
		}
		fmt.Println(line)
		return nil
	}))
	if len(os.Args) > 2 {
		code, _ := strconv.Atoi(os.Args[2])
		os.Exit(code)
	}
}
