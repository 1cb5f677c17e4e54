package guestfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// BenchmarkReadFileCall is what one read_file call of the built-in
// module asks of a plain mount, host side: open the mount, describe its
// root (wasi-libc asks fd_fdstat_get of the directory before every open),
// open the file, describe it, read it to its end and close both. The file
// is the 2.7 KB one of the sandbox's BenchmarkReadFile.
//
//	go test ./sandbox/internal/guestfs -run '^$' -bench ReadFileCall -benchmem
func BenchmarkReadFileCall(b *testing.B) {
	dir := b.TempDir()
	content := bytes.Repeat([]byte("a line of text in the file\n"), 100)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), content, 0o644); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 4096)
	for b.Loop() {
		d, err := NewDir(dir, true, NewBudget(0))
		if err != nil {
			b.Fatal(err)
		}
		readFileCall(b, d, buf, len(content))
		d.Close()
	}
}

// readFileCall opens, describes and reads f.txt of fsys as the built-in
// read_file does, and checks it read want bytes.
func readFileCall(b *testing.B, fsys experimentalsys.FS, buf []byte, want int) {
	root, e := fsys.OpenFile(".", experimentalsys.O_RDONLY, 0)
	if e == 0 {
		_, e = root.Stat()
	}
	if e != 0 {
		b.Fatalf("root: %v", e)
	}
	f, e := fsys.OpenFile("f.txt", experimentalsys.O_RDONLY, 0)
	if e == 0 {
		_, e = f.Stat()
	}
	if e != 0 {
		b.Fatalf("f.txt: %v", e)
	}
	got := 0
	for {
		n, e := f.Read(buf)
		if e != 0 {
			b.Fatalf("read: %v", e)
		}
		if n == 0 {
			break
		}
		got += n
	}
	if got != want {
		b.Fatalf("read %d bytes, want %d", got, want)
	}
	f.Close()
	root.Close()
}
