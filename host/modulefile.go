package host

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/cairnrun/cairn/abi"
)

// A tool module read from a file is read in two steps. What a start checks
// before its first model request is the module's manifest and its
// imports: a few kilobytes of its import section and its manifest section
// (the module's head, readHead). Its bytes, megabytes for a tool written
// in Go, are read when they are first needed: at the start when the
// engine does not remember the file's digest (to hash them), else once the
// first request is out, to be stored (when the store lacks them) and
// loaded. Reading megabytes into a new process's memory costs it a fault a
// page, 15 to 25 ms of a start whose first request left at 65 ms (on a
// virtual machine that backs its memory lazily). The bytes read later must
// be the module the start checked and recorded: the same head when read,
// and the digest recorded once stored (which the store computes) and once
// loaded (which the sandbox computes).

// moduleFile is a tool module's file, read whole when first needed.
type moduleFile struct {
	path string
	head []byte

	once sync.Once
	wasm []byte
	err  error

	mu     sync.Mutex
	digest string // what the bytes must hash to, once recorded
}

// errModuleChanged is the error of a module whose file changed between a
// run's start and the reading of its bytes.
var errModuleChanged = errors.New("the module's file changed after the run started, so it is not the module the run checked and recorded; run the agent again")

// openModuleFile reads the head of the module at path, or, when its head
// cannot be read apart (it is not a module cairn can read so: its
// errors are the whole read's), reports false.
func openModuleFile(path string) (*moduleFile, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	head, ok := readHead(f, fi.Size())
	if !ok {
		return nil, false
	}
	return &moduleFile{path: path, head: head}, true
}

// recorded says the digest the start recorded for the module: the module
// loaded later must have it.
func (f *moduleFile) recorded(digest string) {
	f.mu.Lock()
	f.digest = digest
	f.mu.Unlock()
}

// recordedDigest is the digest recorded, "" before one is.
func (f *moduleFile) recordedDigest() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.digest
}

// read returns the module's bytes, reading them once.
func (f *moduleFile) read() ([]byte, error) {
	f.once.Do(func() {
		wasm, err := os.ReadFile(f.path)
		if err != nil {
			f.err = missing("tool module "+f.path, err)
			return
		}
		if err := f.check(wasm); err != nil {
			f.err = fmt.Errorf("tool module %s: %w", f.path, err)
			return
		}
		f.wasm = wasm
	})
	return f.wasm, f.err
}

// check returns errModuleChanged unless wasm has the head the start
// checked.
func (f *moduleFile) check(wasm []byte) error {
	if head, ok := readHead(bytes.NewReader(wasm), int64(len(wasm))); !ok || !bytes.Equal(head, f.head) {
		return errModuleChanged
	}
	return nil
}

// readHead reads the head of the module of size bytes in r: its preamble,
// and its import section and its sections named abi.ManifestSection, in
// their order, each whole. It reads the id and size of every other
// section and skips it. False for what is not a module's sections.
func readHead(r io.ReaderAt, size int64) ([]byte, bool) {
	var pre [8]byte
	if _, err := r.ReadAt(pre[:], 0); err != nil || string(pre[:4]) != "\x00asm" {
		return nil, false
	}
	head := pre[:]
	name := []byte(abi.ManifestSection)
	for off := int64(len(pre)); off < size; {
		var h [1 + binary.MaxVarintLen32 + 1 + len(abi.ManifestSection)]byte
		n, _ := r.ReadAt(h[:], off)
		if n < 2 {
			return nil, false
		}
		l, k := binary.Uvarint(h[1:min(n, 1+binary.MaxVarintLen32)])
		end := off + 1 + int64(k) + int64(l)
		if k <= 0 || l > uint64(size) || end > size {
			return nil, false
		}
		keep := h[0] == 2 // imports
		if body := h[1+k : n]; h[0] == 0 && len(body) > len(name) {
			keep = int(body[0]) == len(name) && bytes.Equal(body[1:1+len(name)], name)
		}
		if keep {
			sec := make([]byte, end-off)
			if _, err := r.ReadAt(sec, off); err != nil {
				return nil, false
			}
			head = append(head, sec...)
		}
		off = end
	}
	return head, true
}
