package host

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/cairnrun/cairn/checkpoint"
)

// A new agent keeps its tool modules in the store by digest (define.go),
// and hashing them is most of what a warm start spends before its first
// model request: a few milliseconds for each megabyte of module. So the
// engine remembers each module's digest by the module file's identity on
// disk (its path, size, modification and change times and inode, on
// Linux; for a module built into cairn, those of cairn's own executable;
// elsewhere modules are hashed every time), in a small
// file beside the compile cache, and a store that already keeps a blob of
// that digest is not handed the bytes again. The identity is read before
// the bytes are, so a file that changes while it is read is remembered
// under an identity it no longer has. A wrong entry could only come from
// a file rewritten with the same size and times in the same inode, which
// the change time (set by the kernel on every write) rules out, or from
// someone who can write the user's cache, who could change the compiled
// code there as well. Each line carries its checksum, so that a line
// damaged on disk is skipped (costing a hash) rather than read as another
// digest, or as the digest of another identity.

// digestsFile is the name of the file in the compile cache directory.
const digestsFile = "cairn-module-digests"

// maxDigests bounds the entries the file keeps; the oldest go first.
const maxDigests = 256

// moduleDigests is the engine's memory of module digests. It is safe for
// concurrent use; a nil one remembers nothing.
type moduleDigests struct {
	path string // "": remembered for the process only

	mu     sync.Mutex
	loaded bool
	known  map[string]string // digest by identity
	order  []string          // identities, oldest first
}

func newModuleDigests(cacheDir string) *moduleDigests {
	d := &moduleDigests{known: map[string]string{}}
	if cacheDir != "" {
		d.path = filepath.Join(cacheDir, digestsFile)
	}
	return d
}

// lookup returns the digest remembered for identity.
func (d *moduleDigests) lookup(identity string) (string, bool) {
	if d == nil || identity == "" {
		return "", false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.load()
	digest, ok := d.known[identity]
	return digest, ok
}

// remember keeps digest for identity, in the file too. A file that
// cannot be written costs a later start a hash, nothing else.
func (d *moduleDigests) remember(identity, digest string) {
	if d == nil || identity == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.load()
	if d.known[identity] == digest {
		return
	}
	if _, ok := d.known[identity]; !ok {
		d.order = append(d.order, identity)
	}
	d.known[identity] = digest
	for len(d.order) > maxDigests {
		delete(d.known, d.order[0])
		d.order = d.order[1:]
	}
	d.save()
}

// load reads the file once. Lines that do not parse, or whose checksum
// does not match, are skipped: the file is a cache, and a line damaged on
// disk must not give a module another's digest.
func (d *moduleDigests) load() {
	if d.loaded || d.path == "" {
		return
	}
	d.loaded = true
	b, err := readPlainFile(d.path, maxDigestsFile)
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		identity, digest, ok := parseDigestLine(sc.Text())
		if !ok {
			continue
		}
		if _, dup := d.known[identity]; !dup {
			d.order = append(d.order, identity)
		}
		d.known[identity] = digest
	}
}

// save replaces the file, atomically; unsynced, as losing it costs only a
// hash.
func (d *moduleDigests) save() {
	if d.path == "" {
		return
	}
	var b bytes.Buffer
	for _, identity := range d.order {
		b.WriteString(digestLine(identity, d.known[identity]))
	}
	tmp, err := os.CreateTemp(filepath.Dir(d.path), digestsFile+".*.tmp")
	if err != nil {
		return
	}
	_, err = tmp.Write(b.Bytes())
	if cerr := tmp.Close(); err == nil && cerr == nil {
		err = os.Rename(tmp.Name(), d.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}

// A line of the file is a module's identity, its digest, and the CRC-32C
// of the two (the line up to its last tab) in hex, separated by tabs.
func digestLine(identity, digest string) string {
	body := identity + "\t" + digest
	return fmt.Sprintf("%s\t%08x\n", body, crc32.Checksum([]byte(body), castagnoli))
}

// parseDigestLine reads a line digestLine wrote, without its newline.
func parseDigestLine(line string) (identity, digest string, ok bool) {
	i := strings.LastIndexByte(line, '\t')
	if i < 0 {
		return "", "", false
	}
	body, sum := line[:i], line[i+1:]
	identity, digest, ok = strings.Cut(body, "\t")
	if !ok || !validDigest(digest) || sum != fmt.Sprintf("%08x", crc32.Checksum([]byte(body), castagnoli)) {
		return "", "", false
	}
	return identity, digest, true
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxDigestsFile bounds what is read of the file: maxDigests lines of a
// long path each, many times over.
const maxDigestsFile = 4 << 20

// readPlainFile reads the file at path if it is a regular file, up to
// limit bytes. Anything else is not opened, and what is opened is opened
// without waiting, so that a FIFO in its place is not waited on.
func readPlainFile(path string, limit int64) ([]byte, error) {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a file", path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a file", path)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// validDigest says whether s is a sha256 digest as the store writes them.
func validDigest(s string) bool {
	hexSum, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(hexSum) != 64 {
		return false
	}
	for _, c := range hexSum {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// moduleIdentity is who a module file is on disk, for moduleDigests; ""
// when it cannot be told (then its digest is not remembered).
func moduleIdentity(af *AgentFile, ref ToolRef) string {
	path := af.resolve(ref.Module)
	if EmbeddedModule(ref.Module) { // embedded: see embeddedWasm
		exe, err := os.Executable()
		if err != nil {
			return ""
		}
		path = exe
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	inode, ok := fileIdentity(fi)
	if !ok {
		return ""
	}
	id := fmt.Sprintf("%s %s %d %d %s", ref.Module, abs, fi.Size(), fi.ModTime().UnixNano(), inode)
	if strings.ContainsAny(id, "\t\n") {
		return "" // not a line of the file
	}
	return id
}

// keepModule keeps a module's bytes in the store and returns their
// digest, without hashing them when the store already has the digest the
// engine remembers for the module's file. With later, bytes the store
// lacks are written in the background (see blobWrites), when the store
// can say what it has.
func (e *Engine) keepModule(m toolModule, later *blobWrites) (string, error) {
	digest, err := e.keepModuleBytes(m, later)
	if err == nil && m.file != nil {
		m.file.recorded(digest)
	}
	return digest, err
}

func (e *Engine) keepModuleBytes(m toolModule, later *blobWrites) (string, error) {
	digest, known := e.digests.lookup(m.identity)
	has, canTell := false, false
	if known {
		if has, canTell = hasBlob(e.store, digest); has {
			return digest, nil
		}
	}
	if later == nil || (known && !canTell) {
		return e.putModule(m)
	}
	if !known {
		wasm, err := m.bytes()
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(wasm)
		digest = "sha256:" + hex.EncodeToString(sum[:])
		if has, canTell = hasBlob(e.store, digest); !canTell {
			return e.putModule(m)
		}
		e.digests.remember(m.identity, digest)
		if has {
			return digest, nil
		}
	}
	// The store lacks them: they are read as they are written, once the
	// first request is out, and must have the digest recorded. A module
	// file rewritten in between fails that write, and with it the agent's
	// first commit, saying so: the agent has no round to lose, and a new
	// one starts with the new module.
	later.put(m.bytes, digest)
	return digest, nil
}

// putModule stores a module's bytes now.
func (e *Engine) putModule(m toolModule) (string, error) {
	wasm, err := m.bytes()
	if err != nil {
		return "", err
	}
	digest, err := e.store.PutBlob(wasm)
	if err != nil {
		return "", err
	}
	e.digests.remember(m.identity, digest)
	return digest, nil
}

var _ interface{ HasBlob(string) bool } = (*checkpoint.FileStore)(nil)
