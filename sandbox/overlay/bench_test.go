package overlay_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	"github.com/cairnrun/cairn/sandbox/overlay"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// BenchmarkReadFileCall is what one read_file call of the built-in
// module asks of the overlay the host mounts it on, host side: make the
// read-only overlay, mount it, describe its root (wasi-libc asks
// fd_fdstat_get of the directory before every open), open the file,
// describe it, read it to its end (hashing it for ReadWhole), close both
// and the overlay. The file is the 2.7 KB one of the sandbox's
// BenchmarkReadFile.
//
//	go test ./sandbox/overlay -run '^$' -bench ReadFileCall -benchmem
func BenchmarkReadFileCall(b *testing.B) {
	ws := b.TempDir()
	content := bytes.Repeat([]byte("a line of text in the file\n"), 100)
	must(b, os.WriteFile(filepath.Join(ws, "f.txt"), content, 0o644))
	buf := make([]byte, 4096)
	limit := guestfs.StagingLimit{Bytes: guestfs.DefaultStagingLimit, Paths: guestfs.DefaultMaxStagedPaths}
	for b.Loop() {
		ov, err := overlay.New(ws, "")
		must(b, err)
		fsys, _, err := ov.Mount(context.Background(), true, guestfs.NewBudget(0), limit)
		must(b, err)
		readFileCall(b, fsys, buf, len(content))
		if _, _, ok := ov.ReadWhole("f.txt"); !ok {
			b.Fatal("f.txt was not read whole")
		}
		ov.Close()
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
