package sandbox

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// Engine is how a Runtime runs modules: compiled to machine code by
// wazero's optimizing compiler, or interpreted by wazero's interpreter.
//
// Compiling the built-in tools' module the first time takes seconds of CPU
// and, with a tool module compiling beside it and a copy for each memory
// limit, holds over 300 MiB at the run's peak, which a device with 128 MB
// does not have. The interpreter readies a module in a fraction of the
// time, but its form of the code is larger than machine code (about 15
// bytes of memory for each byte of code) and is not kept between runs,
// and its calls are slower. A compiled module is kept in the compile
// cache, so only a cold cache pays for compiling.
type Engine string

const (
	// EngineAuto compiles. When memory is limited below 512 MiB (by the
	// process's cgroup or GOMEMLIMIT) and the compile cache does not hold a module yet, it compiles the module
	// into the cache in a process of its own first, one module at a time,
	// and then loads it from the cache: compiling then holds only what one
	// module needs, and the process that runs the agent only what a warm
	// run needs. See ServeCompile.
	EngineAuto Engine = "auto"
	// EngineCompiler compiles in this process.
	EngineCompiler Engine = "compiler"
	// EngineInterpreter interprets.
	EngineInterpreter Engine = "interpreter"
)

// errUnknownEngine is ParseEngine's error for a name it does not know.
var errUnknownEngine = errors.New("unknown engine")

// ParseEngine reads an engine's name: auto, compiler or interpreter; ""
// is auto.
func ParseEngine(s string) (Engine, error) {
	switch e := Engine(strings.ToLower(strings.TrimSpace(s))); e {
	case "", EngineAuto:
		return EngineAuto, nil
	case EngineCompiler, EngineInterpreter:
		return e, nil
	}
	return "", fmt.Errorf("%w %q: use auto, compiler or interpreter", errUnknownEngine, s)
}

// smallMemory is the memory limit under which EngineAuto compiles a module
// the compile cache does not hold in a process of its own: a cold run
// compiling in one process peaks at about 330 MiB of resident memory.
const smallMemory = 512 << 20

// cgroupRoot is where the cgroup file systems are mounted, and procSelf
// the process's own directory in /proc; tests point them at a fake tree.
var (
	cgroupRoot = "/sys/fs/cgroup"
	procSelf   = "/proc/self"
)

// processMemoryLimit is the least of the limits on this process's memory
// that it can read: its cgroup's (v2 memory.max, or v1
// memory.limit_in_bytes, and those of the cgroups above it) and the Go
// runtime's soft limit (GOMEMLIMIT; not the one SetSoftMemoryLimit derives
// from the cgroup's). ok is false when there is none.
func processMemoryLimit() (limit int64, ok bool) {
	limit = math.MaxInt64
	if l, found := cgroupMemoryLimit(); found {
		limit = l
	}
	if soft := debug.SetMemoryLimit(-1); soft > 0 && soft < limit && soft != ownSoftLimit.Load() {
		limit = soft
	}
	return limit, limit != math.MaxInt64
}

// cgroupMemoryLimit reads the memory limit of the process's cgroup and its
// ancestors from /proc/self/cgroup and the cgroup file systems.
func cgroupMemoryLimit() (int64, bool) {
	f, err := os.Open(filepath.Join(procSelf, "cgroup"))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	least, found := int64(math.MaxInt64), false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var base, file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			base, file = cgroupRoot, "memory.max"
		case hasController(parts[1], "memory"):
			base, file = filepath.Join(cgroupRoot, "memory"), "memory.limit_in_bytes"
		default:
			continue
		}
		if l, ok := leastUpward(base, parts[2], file); ok && l < least {
			least, found = l, true
		}
	}
	return least, found
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// leastUpward is the least limit in file of the cgroup at path under base
// and of each cgroup above it. In a container the path may name a cgroup
// the container cannot see; then its own root's file is what there is.
func leastUpward(base, path, file string) (int64, bool) {
	least, found := int64(math.MaxInt64), false
	for p := filepath.Clean("/" + path); ; p = filepath.Dir(p) {
		if l, ok := readLimit(filepath.Join(base, p, file)); ok && l < least {
			least, found = l, true
		}
		if p == "/" {
			return least, found
		}
	}
}

// readLimit reads a cgroup's memory limit: a number of bytes; "max" (v2)
// or a number near the largest (v1's unlimited) is no limit.
func readLimit(file string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil || n <= 0 || n >= math.MaxInt64/2 {
		return 0, false
	}
	return n, true
}

// apart reports whether a module of digest is compiled into the cache in
// a process of its own before it is loaded: for EngineAuto with a compile
// cache on disk, in a program that serves it (ServeCompile), when memory
// is limited below smallMemory and the cache has not got the module in
// the file entry names (see entryName; called only then, since it hashes
// the module's code). A mark naming another file (of the module as an
// earlier cairn rewrote it) would have wazero compile it in this process.
func (r *Runtime) apart(digest string, entry func() string) bool {
	if r.engine != EngineAuto || r.cacheDir == "" || !servesCompile.Load() {
		return false
	}
	had := r.cachedEntry(digest)
	if l, ok := r.memoryLimit(); !ok || l >= smallMemory {
		return false
	}
	return had == "" || had != entry()
}

// compilesApart reports whether a module this Runtime compiles, rather
// than loads from the compile cache, is compiled in a process of its own
// (see apart).
func (r *Runtime) compilesApart() bool {
	if r.engine != EngineAuto || r.cacheDir == "" || !servesCompile.Load() {
		return false
	}
	l, ok := r.memoryLimit()
	return ok && l < smallMemory
}

// Compiling reports whether a module is being readied for calls: compiled,
// interpreted, or loaded from the compile cache (which takes a moment).
func (r *Runtime) Compiling() bool { return r.inFlight.Load() > 0 }

// digestOf is "sha256:" and the hex of wasm's SHA-256, a module's name.
func digestOf(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// The compile cache's marks: a file in markDir for each module the
// compiler has compiled into the cache, named for the module, the wazero
// version, and the machine and its CPU's features (wazero keys its own
// files by these too). A
// mark holds the name of wazero's file of the module (see entryName), and
// is written only once that file is there: a compile whose file could not
// be written (a full disk) leaves none. An earlier cairn's mark is empty,
// and says nothing: it is written again once the module is compiled.
const markDir = "cairn-compiled"

// markName is the mark of the module of digest, under the cache.
func markName(digest string) string { return markNameOn(digest, cpuFeatures()) }

// markNameOn is the mark of the module of digest on a machine of the CPU
// features features (see cpuFeatures), which wazero names its file for:
// in a cache copied from a machine of another CPU, the module's mark is
// not this machine's, as its file is not.
func markNameOn(digest string, features uint64) string {
	sum := sha256.Sum256([]byte(digest + "\x00" + wazeroVersion() + "\x00" + runtime.GOOS + "/" + runtime.GOARCH +
		"\x00" + strconv.FormatUint(features, 16)))
	return markDir + "/" + hex.EncodeToString(sum[:16])
}

func (r *Runtime) markFile(digest string) string {
	if r.cacheDir == "" {
		return ""
	}
	return filepath.Join(r.cacheDir, filepath.FromSlash(markName(digest)))
}

// cached reports whether the compile cache holds the module compiled: it
// has the module's mark, and the file the mark names (a bounded cache
// removes files, see TrimCache), written by this build's wazero version
// (see ofThisVersion: wazero would compile the module again in this
// process). A mark that names no such file, or is not a file, says
// nothing: under a small memory limit the module is compiled apart,
// which loads its file if it is there, or writes it afresh, and then
// marked.
func (r *Runtime) cached(digest string) bool { return r.cachedEntry(digest) != "" }

// cachedEntry is the file the module's mark names when cached reports
// true, "" when not.
func (r *Runtime) cachedEntry(digest string) string { return cachedEntryIn(r.cacheDir, digest) }

// CachedFile is the file, under the compile cache in dir, that holds wasm
// compiled for this machine by this build, as a Runtime that compiled the
// module there, or loaded it from there, recorded it (see cached): ""
// when the cache holds no such file, or its record of the module could
// not be written (a read-only cache). It compiles nothing.
func CachedFile(dir string, wasm []byte) string {
	return filepath.FromSlash(cachedEntryIn(dir, digestOf(wasm)))
}

// cachedEntryIn is cachedEntry of the compile cache in dir.
func cachedEntryIn(dir, digest string) string {
	if dir == "" {
		return ""
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return ""
	}
	defer root.Close()
	entry, ok := readMark(root, markName(digest))
	if !ok || entry == "" || !isRootEntry(root, entry) || !ofThisVersion(root, entry) {
		return ""
	}
	return entry
}

// readMark returns the file the mark name names, "" for none. It reports
// false for a mark that is not a regular file or cannot be read, which it
// does not wait on (a FIFO), and "" for one that names no file entryName
// could give.
func readMark(root *os.Root, name string) (string, bool) {
	if fi, err := root.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b := make([]byte, 256)
	n, _ := io.ReadFull(f, b)
	if entry := string(b[:n]); validEntry(entry) {
		return entry, true
	}
	return "", true
}

// markCached records that the compile cache holds the module of digest
// compiled, in wazero's file entry (see entryName): only if that file is
// there, which it reports. Failing to write the mark is only a cost: a
// later run compiles the module apart again.
func (r *Runtime) markCached(digest, entry string) bool {
	root, err := os.OpenRoot(r.cacheDir)
	if err != nil {
		return false
	}
	defer root.Close()
	if !isRootEntry(root, entry) {
		return false
	}
	r.markEntry(digest, entry)
	return true
}

// markEntry writes into the module's mark the name of the file wazero
// keeps it in, when the mark names none, or another, or is not a file (a
// FIFO, replaced without being opened); a directory is left as it is.
func (r *Runtime) markEntry(digest, entry string) {
	root, err := os.OpenRoot(r.cacheDir)
	if err != nil {
		return
	}
	defer root.Close()
	name := markName(digest)
	if had, ok := readMark(root, name); ok && had == entry {
		return
	}
	if fi, err := root.Lstat(name); err == nil && fi.IsDir() {
		return
	}
	root.MkdirAll(markDir, 0o700)
	tmp := fmt.Sprintf("%s.%d.tmp", name, os.Getpid())
	if root.WriteFile(tmp, []byte(entry), 0o600) != nil || root.Rename(tmp, name) != nil {
		root.Remove(tmp)
	}
}

// wazeroVersion is the version of wazero built in, "" if unknown.
func wazeroVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/tetratelabs/wazero" {
			return d.Version
		}
	}
	return ""
}
