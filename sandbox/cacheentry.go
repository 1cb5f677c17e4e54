package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
	"path"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/cpu"
)

// wazero names the compile cache's file of a module for a hash of the
// module's bytes, of whether its instances are closed when their context
// ends, and of the CPU features its code may use, in a directory named
// for its version and the machine. cairn names the file the same way
// (entryName), so that loading a module refreshes the time its file was
// last used (atime is not kept on many file systems) and a bounded cache
// (see TrimCache) removes the files used least recently, never one this
// process loaded. The name is checked against the file wazero writes: a
// Runtime that does not find it removes none of this version's files
// (see Runtime.touchEntry), and a test fails when a wazero upgrade
// names them otherwise.

// versionDir is the directory wazero keeps this build's compiled modules
// in, under the compile cache's.
func versionDir() string {
	return "wazero-" + wazeroName() + "-" + runtime.GOARCH + "-" + runtime.GOOS
}

// wazeroName is the version wazero names itself by in its directory and
// in the files it writes: "dev" when the build does not say.
func wazeroName() string {
	if v := wazeroVersion(); v != "" && v != "(devel)" {
		return v
	}
	return "dev"
}

// entryHeader is how a file this build's wazero writes begins: "WAZEVO",
// the length of wazero's version, and the version.
func entryHeader() []byte {
	v := wazeroName()
	return append(append([]byte("WAZEVO"), byte(len(v))), v...)
}

// ofThisVersion reports whether the file entry under root begins as
// this build's wazero begins its files (see entryHeader). wazero removes
// a file that names another version, and compiles the module again as
// if there were none, without a word; such a file, or one that does not
// begin as wazero's do, is no file of the module for Runtime.cached. It
// does not wait on what is not a regular file (a FIFO).
func ofThisVersion(root *os.Root, entry string) bool {
	f, err := root.OpenFile(entry, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	want := entryHeader()
	got := make([]byte, len(want))
	_, err = io.ReadFull(f, got)
	return err == nil && bytes.Equal(got, want)
}

// entryName is the file, under the compile cache's directory, that
// wazero keeps code compiled as code, run closing instances when their
// context ends or not, in.
func entryName(code []byte, closeOnDone bool) string {
	id := sha256.New()
	id.Write(code)
	if closeOnDone {
		id.Write([]byte{1})
	} else {
		id.Write([]byte{0})
	}
	key := sha256.New()
	key.Write(id.Sum(nil))
	key.Write([]byte("WAZEVO"))
	key.Write(binary.LittleEndian.AppendUint64(nil, cpuFeatures()))
	return path.Join(versionDir(), hex.EncodeToString(key.Sum(nil)))
}

// cpuFeatures are the CPU features wazero's compiler uses, as it records
// them in its files' names.
func cpuFeatures() uint64 {
	var f uint64
	switch runtime.GOARCH {
	case "amd64":
		if cpu.X86.HasSSE41 {
			f |= 1
		}
		if cpu.X86.HasBMI1 {
			f |= 2
		}
		if cpu.X86.HasBMI1 && cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT {
			f |= 4
		}
	case "arm64":
		if cpu.ARM64.HasATOMICS {
			f |= 1
		}
	}
	return f
}

// validEntry says whether name is a name entryName gives: a mark that
// names anything else is not believed.
func validEntry(name string) bool {
	dir, file, ok := strings.Cut(name, "/")
	if !ok || !strings.HasPrefix(dir, "wazero-") || strings.ContainsAny(dir, `\`) || len(file) != 64 {
		return false
	}
	_, err := hex.DecodeString(file)
	return err == nil && strings.ToLower(file) == file
}
