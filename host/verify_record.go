package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"sync"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"go.yaml.in/yaml/v3"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/filepool"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Every sandboxed call is recorded for `cairn verify` (docs/verify.md):
// the module's digest, a digest of its policy, whether it had the host's
// clock or randomness, and what it saw of the workspace — the files it
// read and the bases of the files it changed, by the digest of their
// content (kept in the store too with `record: reads`), and the paths it
// only described or listed, by size.
// The recording rides in the call's result record and, once the round
// commits, in the tool message, so compacting the journal keeps it.

// detSeed is the seed of the randomness of a call not granted the host's
// (see sandbox's detRandom).
const detSeed = 42

// sight is what a call ran with and saw, gathered as it ends and before
// its changes are applied; the run turns it into a conversation.Recording.
type sight struct {
	module, ref, policy string
	realClock, realRand bool
	outside             []string
	// reads, described, listed and unchanged are those of its workspace
	// overlay.
	reads, described, listed, unchanged []string
	// whole is, of reads, what the overlay hashed as the call read it.
	whole map[string]wholeFile
	// bases are the files the call changed, as it found them (its
	// effects' bases).
	bases map[string]filepool.Version
	// versions is the content of each file whose digest the recording
	// took, for the file pool (recordReads), which need not read it again.
	versions map[string]filepool.Version
}

// sightOf is what a call of t with module mod under policy p saw through
// its overlay ov (nil when it mounted no workspace).
func (t *tool) sightOf(mod *sandbox.Module, p sandbox.Policy, ov *overlay.Overlay) *sight {
	s := &sight{module: mod.Digest(), ref: t.ref.Module, policy: policyDigest(p),
		realClock: p.RealClock, realRand: p.RealRandom}
	for _, m := range p.Mounts {
		if m.Overlay == nil {
			s.outside = append(s.outside, "mount "+m.GuestPath)
		}
	}
	for _, name := range sortedKeys(p.Env) {
		s.outside = append(s.outside, "env "+name)
	}
	if ov != nil {
		s.reads = ov.Reads()
		s.described, s.listed = ov.Seen()
		// A staged file gone by now fails the call's effects too.
		s.unchanged, _ = ov.Unchanged()
		for _, p := range s.reads {
			if v, mode, ok := ov.ReadWhole(p); ok {
				if s.whole == nil {
					s.whole = map[string]wholeFile{}
				}
				s.whole[p] = wholeFile{filepool.Version{Exists: true, Hash: v.Hash, Size: v.Size}, mode}
			}
		}
	}
	return s
}

// wholeFile is a file a call read whole, as it read it.
type wholeFile struct {
	v    filepool.Version
	mode os.FileMode
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// policyDigest is a digest of what of a policy decides how a call runs,
// but where its mounts are on the host: a verify runs it elsewhere. It is
// the SHA-256 of a text in the form of fmt's
//
//	mem=%d timeout=%d in=%d out=%d err=%d files=%d staging=%d paths=%d clock=%t rand=%t
//	imports=%q args=%q env=%q
//	mount %s ro=%t
//
// (one mount line for each mount), appended without fmt: each call takes
// one, and recorded digests must stay what they were.
func policyDigest(p sandbox.Policy) string {
	b := make([]byte, 0, 512)
	for _, f := range []struct {
		name string
		n    int64
	}{{"mem=", p.MemoryLimit}, {" timeout=", int64(p.Timeout)}, {" in=", p.StdinLimit}, {" out=", p.StdoutLimit},
		{" err=", p.StderrLimit}, {" files=", int64(p.MaxOpenFiles)}, {" staging=", p.StagingLimit}, {" paths=", int64(p.MaxStagedPaths)}} {
		b = strconv.AppendInt(append(b, f.name...), f.n, 10)
	}
	b = strconv.AppendBool(append(b, " clock="...), p.RealClock)
	b = strconv.AppendBool(append(b, " rand="...), p.RealRandom)
	b = appendQuoted(append(b, "\nimports="...), p.Imports)
	b = appendQuoted(append(b, " args="...), p.Args)
	var env []string
	if len(p.Env) > 0 {
		env = sortedKeys(p.Env)
	}
	b = append(appendQuoted(append(b, " env="...), env), '\n')
	for _, m := range p.Mounts {
		b = append(append(b, "mount "...), m.GuestPath...)
		b = append(strconv.AppendBool(append(b, " ro="...), m.ReadOnly), '\n')
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// appendQuoted appends list as fmt's %q has it: ["a" "b"].
func appendQuoted(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendQuote(b, s)
	}
	return append(b, ']')
}

// RecordMode is the agent file's `record:`, what is kept of what each
// call read, for `cairn verify`.
type RecordMode string

// The record modes.
const (
	// RecordDigests, the default (""): the digest and size of each file
	// a call read. Verify takes the content from the workspace while the
	// file there is still what the call read.
	RecordDigests RecordMode = "digests"
	// RecordReads keeps the content of each file a call read in the
	// store too, so that a call verifies whatever became of the file. A
	// content the store has not seen costs a crash-atomic write
	// (BENCHMARKS.md, "Recording for verify").
	RecordReads RecordMode = "reads"
)

// UnmarshalYAML reads a record mode, refusing an unknown one.
func (m *RecordMode) UnmarshalYAML(n *yaml.Node) error {
	switch RecordMode(n.Value) {
	case "", RecordDigests, RecordReads:
		*m = RecordMode(n.Value)
		return nil
	}
	return fmt.Errorf("record: %q: want digests or reads", n.Value)
}

// blobCache stores content in the store once per run, when keep: a digest
// stored by this run is not stored again. It is safe for concurrent use.
type blobCache struct {
	store checkpoint.Store
	keep  bool
	mu    sync.Mutex
	have  map[string]bool
}

func newBlobCache(store checkpoint.Store, mode RecordMode) *blobCache {
	return &blobCache{store: store, keep: mode == RecordReads, have: map[string]bool{}}
}

// put stores data, whose digest is d, unless this run stored it already,
// and returns whether it is kept: false when the cache keeps no content.
func (c *blobCache) put(data []byte, d string) (bool, error) {
	if !c.keep {
		return false, nil
	}
	c.mu.Lock()
	have := c.have[d]
	c.mu.Unlock()
	if have {
		return true, nil
	}
	if _, err := c.store.PutBlob(data); err != nil {
		return false, err
	}
	c.mu.Lock()
	c.have[d] = true
	c.mu.Unlock()
	return true, nil
}

// recordCall makes the recording of a finished call: it stores the
// content of the files the call read or changed (durably, before the
// record that names them) and sets res.recording.
func (r *run) recordCall(round int, res *callResult) error {
	if res.sight == nil || r.seenBlobs == nil {
		return nil
	}
	rec, err := res.sight.recording(round, r.workspace, r.seenBlobs, res)
	if err != nil {
		return fmt.Errorf("record call %s for verify: %w", res.call.ID, err)
	}
	res.recording = rec
	return nil
}

// recording turns s into the recording of res.
func (s *sight) recording(round int, workspace string, blobs *blobCache, res *callResult) (*conversation.Recording, error) {
	rec := &conversation.Recording{Round: round, Module: s.module, Ref: s.ref, Policy: s.policy,
		RealClock: s.realClock, RealRandom: s.realRand, Outside: s.outside, IsError: res.isError,
		Output: sha256.Sum256([]byte(res.output))}
	if !s.realRand {
		rec.Seed = detSeed
	}
	if len(res.effects) > 0 {
		b, err := res.effects.Marshal()
		if err != nil {
			return nil, err
		}
		rec.Effects = b
	}
	files, err := s.files(workspace, blobs, res.effects)
	if err != nil {
		return nil, err
	}
	rec.Files = files
	rec.Intern() // the state holds it for as long as the agent runs
	return rec, nil
}

// files is what the call saw of the workspace, which still holds what it
// saw: the round's changes are not applied yet.
func (s *sight) files(workspace string, blobs *blobCache, effects overlay.Effects) ([]conversation.SeenFile, error) {
	if len(s.reads)+len(s.described)+len(s.listed)+len(s.unchanged)+len(effects) == 0 {
		return nil, nil
	}
	seen := map[string]conversation.SeenFile{}
	s.versions = map[string]filepool.Version{}
	reads := s.reads
	if !blobs.keep {
		reads = s.takeWhole(seen)
	}
	if len(reads)+len(s.described)+len(s.listed)+len(s.unchanged)+len(effects) == 0 {
		return sortedSeen(seen), nil
	}
	s.bases = map[string]filepool.Version{}
	for _, e := range effects {
		if e.Base.IsFile() {
			s.bases[e.Path] = filepool.Version{Exists: true, Hash: e.Base.Hash, Size: e.Base.Size}
		}
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for _, p := range reads {
		if err := s.keepContent(root, p, blobs, seen); err != nil {
			return nil, err
		}
	}
	for _, e := range effects {
		if !e.Base.Exists {
			continue
		}
		if err := s.keepBase(root, e.Path, e.Base.Dir, blobs, seen); err != nil {
			return nil, err
		}
	}
	for _, p := range s.unchanged {
		info, err := root.Lstat(p)
		if err != nil {
			continue // gone since: the call's replay will say so
		}
		if err := s.keepBase(root, p, info.IsDir(), blobs, seen); err != nil {
			return nil, err
		}
	}
	for _, p := range s.described {
		describe(root, p, seen)
	}
	for _, dir := range s.listed {
		listInto(root, dir, seen)
	}
	return sortedSeen(seen), nil
}

// keepBase records what a path the call changed held before, a
// directory or the file's content.
func (s *sight) keepBase(root *os.Root, p string, dir bool, blobs *blobCache, seen map[string]conversation.SeenFile) error {
	if dir {
		seen[p] = conversation.SeenFile{Path: p, Dir: true}
		return nil
	}
	return s.keepContent(root, p, blobs, seen)
}

// takeWhole records the files the call read whole as it read them,
// without reading them again, and returns the other reads.
func (s *sight) takeWhole(seen map[string]conversation.SeenFile) []string {
	var rest []string
	for _, p := range s.reads {
		if !s.asRead(p, seen) {
			rest = append(rest, p)
		}
	}
	return rest
}

// asRead records the file p as the call saw it, its content not kept,
// if that is known (seenAs), and reports whether it is.
func (s *sight) asRead(p string, seen map[string]conversation.SeenFile) bool {
	v, mode, ok := s.seenAs(p)
	if ok {
		s.versions[p] = v
		seen[p] = conversation.SeenFile{Path: p, Size: v.Size, Mode: mode, Digest: contentDigest(v)}
	}
	return ok
}

// seenAs is the content of the file p as the call saw it, when the call
// read it whole or changed it, and its permissions when known (0 when
// not).
func (s *sight) seenAs(p string) (filepool.Version, os.FileMode, bool) {
	if w, ok := s.whole[p]; ok {
		return w.v, w.mode, true
	}
	v, ok := s.bases[p]
	return v, 0, ok
}

func sortedSeen(seen map[string]conversation.SeenFile) []conversation.SeenFile {
	out := make([]conversation.SeenFile, 0, len(seen))
	for _, f := range seen {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// keepContent records the digest of the workspace file p, and keeps its
// content as blobs says. A file gone since the call read it is left out,
// unless the call read it whole or changed it: the call's replay will say
// so. The file is opened once, without blocking (a FIFO planted there is
// not waited on), and only hashed, not held, unless its content is kept.
// A file the call read whole or changed that holds something else by now
// (another agent sharing the workspace, or a person, changed it since) is
// recorded as the call saw it, its content not kept: what the workspace
// holds now is not what the call saw.
func (s *sight) keepContent(root *os.Root, p string, blobs *blobCache, seen map[string]conversation.SeenFile) error {
	f, err := filepool.OpenRead(root, p)
	if err != nil {
		s.asRead(p, seen)
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		s.asRead(p, seen)
		return nil
	}
	var v filepool.Version
	kept := false
	if blobs.keep {
		data, err := io.ReadAll(f)
		if err != nil {
			s.asRead(p, seen)
			return nil
		}
		if v = filepool.HashBytes(data); s.changedSince(p, v) {
			s.asRead(p, seen)
			return nil
		}
		if kept, err = blobs.put(data, contentDigest(v)); err != nil {
			return fmt.Errorf("keep the content of %s: %w", p, err)
		}
	} else if v, err = filepool.HashReader(f); err != nil || s.changedSince(p, v) {
		s.asRead(p, seen)
		return nil
	}
	s.versions[p] = v
	seen[p] = conversation.SeenFile{Path: p, Size: v.Size, Mode: fi.Mode().Perm(), Digest: contentDigest(v), Kept: kept}
	return nil
}

// changedSince reports whether the call saw the file p (seenAs) as other
// than v.
func (s *sight) changedSince(p string, v filepool.Version) bool {
	saw, _, ok := s.seenAs(p)
	return ok && saw != v
}

// version is the content of the file p as the recording hashed it, if it
// did; s may be nil.
func (s *sight) version(p string) (filepool.Version, bool) {
	if s == nil {
		return filepool.Version{}, false
	}
	v, ok := s.versions[p]
	return v, ok
}

// contentDigest is the store's digest of the content v: "sha256:" and its hex.
func contentDigest(v filepool.Version) string { return "sha256:" + v.Hash.String() }

// describe notes the size and kind of p, unless its content is kept.
func describe(root *os.Root, p string, seen map[string]conversation.SeenFile) {
	if _, ok := seen[p]; ok || p == "." {
		return
	}
	fi, err := root.Stat(p)
	switch {
	case err != nil:
	case fi.IsDir():
		seen[p] = conversation.SeenFile{Path: p, Dir: true}
	case fi.Mode().IsRegular():
		seen[p] = conversation.SeenFile{Path: p, Size: fi.Size(), Mode: fi.Mode().Perm()}
	}
}

// listInto notes the directory dir and every entry of it.
func listInto(root *os.Root, dir string, seen map[string]conversation.SeenFile) {
	describe(root, dir, seen)
	f, err := root.Open(dir)
	if err != nil {
		return
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	for _, n := range names {
		p := n
		if dir != "." {
			p = path.Join(dir, n)
		}
		describe(root, p, seen)
	}
}
