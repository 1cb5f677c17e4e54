package sandbox

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"path"
	"runtime"
	"strings"

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
	v := wazeroVersion()
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	return "wazero-" + v + "-" + runtime.GOARCH + "-" + runtime.GOOS
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
