package host

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/strictcbor"
	"github.com/cairnrun/cairn/internal/syncpoint"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Each round's changes are kept, for the last keepRounds rounds that made
// any, so that `cairn diff` can show them and `cairn undo` can take the
// last one back: per call, its effect manifest, and the files before and
// after, in one CBOR file beside the agent's journal:
//
//	changes/round-<N>/<call>.cbor   a keptRecord
//
// (An agent kept by an earlier version may have a directory per call
// instead: <call>/manifest.cbor, <call>/before/<path>, <call>/after/<path>;
// both are read.) A call's record is complete (synced and renamed into
// place) before its changes are applied, so the "before" files are never
// the call's own output, even when a crash makes resume apply again. One
// file a call keeps the syncs that make it durable to three at most.

// keptRecord is one call's kept changes.
type keptRecord struct {
	Manifest []byte            `cbor:"1,keyasint"`
	Before   map[string][]byte `cbor:"2,keyasint,omitempty"`
	After    map[string][]byte `cbor:"3,keyasint,omitempty"`
}

// keptDec reads a kept record, whose maps are keyed by the names of
// workspace files, which need not be UTF-8 (strictcbor.StoredDecMode).
var keptDec = strictcbor.StoredDecMode(strictcbor.Limits{Depth: 4, Elements: 1 << 20, Pairs: 1 << 20})

// keepRounds is how many rounds' changes are kept.
const keepRounds = 10

// changesRoot is where an agent's rounds' changes are kept (keptDirOf).
func (e *Engine) changesRoot(agent string) string {
	return filepath.Join(keptDirOf(e.store, agent), "changes")
}

func callChanges(root string, round int, call string) string {
	return filepath.Join(root, fmt.Sprintf("round-%d", round), unsafeName.ReplaceAllString(call, "_")+".cbor")
}

// keepChanges records a call's changes before they are applied: its
// manifest and, for each file it writes or deletes, the file before and
// after. A record that exists is complete and kept as it is. The record is
// durable (the file, the rename that completes it, the directories that
// name it) before keepChanges returns: were the apply to survive a power
// cut and the record not, resume would record the call's own output as
// "before".
func keepChanges(root string, round int, call, workspace, staging string, effects overlay.Effects) error {
	name := callChanges(root, round, call)
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	dirs, err := makeDirs(filepath.Dir(name), filepath.Dir(root))
	if err != nil {
		return err
	}
	tmp := name + ".tmp"
	if err := writeKeptRecord(tmp, workspace, staging, effects); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return err
	}
	return syncDirs(append([]string{filepath.Dir(name)}, dirs...)...)
}

// writeKeptRecord writes a call's keptRecord to name and syncs it. The
// record is encoded here, streaming each file into it, so that none of
// what a call staged (up to its staging limit) sits in the host's memory:
// a CBOR map of the record's three fields, the files' maps keyed by path,
// each file a byte string of the size it had when opened.
func writeKeptRecord(name, workspace, staging string, effects overlay.Effects) error {
	manifest, err := effects.Marshal()
	if err != nil {
		return err
	}
	var before, after []keptFile
	for _, e := range effects {
		if e.Base.IsFile() {
			before = append(before, keptFile{e.Path, filepath.Join(workspace, e.Path)})
		}
		if e.New.IsFile() {
			after = append(after, keptFile{e.Path, overlay.StagedFile(staging, e.Path)})
		}
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	err = encodeKeptRecord(w, manifest, before, after)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		syncpoint.Synced(name)
	}
	return errors.Join(err, f.Close())
}

// keptFile is a file of a kept record: its path in the workspace, and
// where its content is read from.
type keptFile struct{ path, from string }

func encodeKeptRecord(w *bufio.Writer, manifest []byte, before, after []keptFile) error {
	fields := 1
	for _, files := range [][]keptFile{before, after} {
		if len(files) > 0 {
			fields++
		}
	}
	w.Write(cborHead(5, uint64(fields)))
	w.Write(cborHead(0, 1))
	w.Write(cborHead(2, uint64(len(manifest))))
	w.Write(manifest)
	for key, files := range [][]keptFile{before, after} {
		if len(files) == 0 {
			continue
		}
		w.Write(cborHead(0, uint64(key+2)))
		w.Write(cborHead(5, uint64(len(files))))
		for _, kf := range files {
			w.Write(cborHead(3, uint64(len(kf.path))))
			w.WriteString(kf.path)
			if err := streamBytes(w, kf.from); err != nil {
				return err
			}
		}
	}
	return nil
}

// streamBytes writes the file at path as a CBOR byte string.
func streamBytes(w *bufio.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	w.Write(cborHead(2, uint64(fi.Size())))
	if _, err := io.CopyN(w, f, fi.Size()); err != nil {
		return fmt.Errorf("keep %s: %w", path, err)
	}
	return nil
}

// cborHead is the head of a CBOR data item of major type major whose
// argument is n (RFC 8949, section 3).
func cborHead(major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return []byte{m | byte(n)}
	case n <= 0xff:
		return []byte{m | 24, byte(n)}
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16([]byte{m | 25}, uint16(n))
	case n <= 0xffffffff:
		return binary.BigEndian.AppendUint32([]byte{m | 26}, uint32(n))
	}
	return binary.BigEndian.AppendUint64([]byte{m | 27}, n)
}

// makeDirs makes dir and the directories above it up to top, and returns
// the parents of those it made, whose entries must be synced.
func makeDirs(dir, top string) ([]string, error) {
	var made []string
	for d := dir; d != top && d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = append(made, filepath.Dir(d))
	}
	return made, os.MkdirAll(dir, 0o700)
}

// readKeptRecord reads a call's kept changes: a record file, or the
// directory an earlier version kept.
func readKeptRecord(path string) (keptRecord, overlay.Effects, error) {
	var rec keptRecord
	var err error
	if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
		rec, err = readKeptDir(path)
	} else if b, rerr := os.ReadFile(path); rerr != nil {
		err = rerr
	} else {
		err = keptDec.Unmarshal(b, &rec)
	}
	if err != nil {
		return rec, nil, err
	}
	effects, err := overlay.DecodeEffects(rec.Manifest)
	return rec, effects, err
}

// readKeptDir reads the directory of a call's changes.
func readKeptDir(dir string) (keptRecord, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.cbor"))
	if err != nil {
		return keptRecord{}, err
	}
	rec := keptRecord{Manifest: b, Before: map[string][]byte{}, After: map[string][]byte{}}
	effects, err := overlay.DecodeEffects(b)
	if err != nil {
		return rec, err
	}
	for _, e := range effects {
		if b, err := os.ReadFile(filepath.Join(dir, "before", filepath.FromSlash(e.Path))); err == nil {
			rec.Before[e.Path] = b
		}
		if b, err := os.ReadFile(filepath.Join(dir, "after", filepath.FromSlash(e.Path))); err == nil {
			rec.After[e.Path] = b
		}
	}
	return rec, nil
}

// keptCallsOf lists the calls' records of a round's kept changes, with
// their calls' names, in the order the model asked for the calls, which
// is the order their changes were applied in (see askedOrder).
func keptCallsOf(dir string, st *checkpoint.State) (paths, calls []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		n := e.Name()
		switch {
		case e.IsDir() && !strings.HasSuffix(n, ".tmp"):
			paths, calls = append(paths, filepath.Join(dir, n)), append(calls, n)
		case !e.IsDir() && strings.HasSuffix(n, ".cbor"):
			paths, calls = append(paths, filepath.Join(dir, n)), append(calls, strings.TrimSuffix(n, ".cbor"))
		}
	}
	order := askedOrder(st, calls)
	idx := make([]int, len(calls))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return order[calls[idx[a]]] < order[calls[idx[b]]] })
	sortedPaths, sortedCalls := make([]string, len(idx)), make([]string, len(idx))
	for i, k := range idx {
		sortedPaths[i], sortedCalls[i] = paths[k], calls[k]
	}
	return sortedPaths, sortedCalls, nil
}

// askedOrder places each of a round's kept calls, named as their records
// are (the call's id made safe for a file name), where the model asked for
// it: the index of the assistant message that asked for it and of the call
// in it, the last message that did, searched from the newest back. The
// names of the records' files, which order them otherwise, do not: ids
// the host makes sort call_1_10 before call_1_2, and a provider's are in
// no order at all, and undo must take changes back in the reverse of the
// order they were applied in (a directory a call made, which a later call
// wrote into, goes after that write). A call no message asks for goes
// last, in the order of its name.
func askedOrder(st *checkpoint.State, calls []string) map[string]int64 {
	order := make(map[string]int64, len(calls))
	for _, c := range calls {
		order[c] = math.MaxInt64
	}
	found := 0
	for i := len(st.Messages) - 1; i >= 0 && found < len(calls); i-- {
		for j, tc := range st.Messages[i].ToolCalls {
			name := unsafeName.ReplaceAllString(tc.ID, "_")
			if at, ok := order[name]; ok && at == math.MaxInt64 {
				order[name] = int64(i)<<32 | int64(j)
				found++
			}
		}
	}
	return order
}

// trimChanges keeps the changes of the last keepRounds rounds. Each older
// round's are removed as undo removes a round it took back (forgetRound):
// moved aside, then removed, so that a kill part way leaves them whole or
// gone, never a part of them under the round's name. A round that cannot
// be removed is tried again by the next trim.
func trimChanges(root string) {
	rounds := changedRounds(root)
	for len(rounds) > keepRounds {
		if forgetRound(filepath.Join(root, fmt.Sprintf("round-%d", rounds[0]))) != nil {
			return
		}
		rounds = rounds[1:]
	}
}

// changedRounds lists the rounds whose changes are kept, ascending.
func changedRounds(root string) []int {
	entries, _ := os.ReadDir(root)
	var rounds []int
	for _, e := range entries {
		if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "round-")); err == nil && strings.HasPrefix(e.Name(), "round-") {
			rounds = append(rounds, n)
		}
	}
	sort.Ints(rounds)
	return rounds
}

// FileChange is one path a round changed, as `cairn diff` shows it: its
// files' sizes, and where Texts reads their content, which Changes does
// not read.
type FileChange struct {
	Call string `json:"call"`
	Path string `json:"path"`
	Op   string `json:"op"`
	// BeforeSize and AfterSize are -1 where there is no file.
	BeforeSize int64 `json:"before_size"`
	AfterSize  int64 `json:"after_size"`

	before, after content // nil where there is no file
}

// ErrNoChanges: the agent has no kept changes for that round.
var ErrNoChanges = errors.New("no changes kept for that round")

// errUndidAll is why a node that kept an agent's changes keeps none:
// undo took back every round it kept.
var errUndidAll = errors.New("undo took back the changes of every round this node kept")

// noChangesError is the error of a round whose changes no one keeps for
// another reason (checkpoint.ErrNoRound): it is ErrNoChanges too.
type noChangesError struct{ error }

func (e noChangesError) Is(target error) bool { return target == ErrNoChanges }
func (e noChangesError) Unwrap() error        { return e.error }

// Changes returns what a round changed in the workspace (round 0: the
// last round that changed anything), each path's content left for
// FileChange.Texts to read, and which round that is: from the
// changes this node kept, or else from the store's pasts (a round run
// on another node, or too long ago to be kept here), whose changes name
// no call.
//
// # Errors
//
// ErrNoChanges when neither keeps the round's changes (and, when the
// store's pasts lack the round, what they lack, or that they say it
// changed no file; for a round the agent never had, it is
// checkpoint.ErrNoRound too); the store's error when
// its pasts cannot be read (a damaged row, the database out of reach),
// which is not the same as their having none.
func (e *Engine) Changes(ctx context.Context, agent string, round int) (int, []FileChange, error) {
	if err := e.begin(ctx); err != nil {
		return 0, nil, err
	}
	n, out, err := e.keptChanges(agent, round)
	if !errors.Is(err, ErrNoChanges) {
		return n, out, err
	}
	if errors.Is(err, errUndidAll) {
		// The last round the store's pasts say changed a file may be one
		// undo took back, which they keep as it ran: shown, it would be
		// taken for the workspace's last change. It is shown only when
		// run since the last undo (on another node: one here would be
		// kept here); else a round is named instead.
		if r := e.changedSinceUndo(agent); r > 0 {
			if past, _, perr := e.pastChanges(agent, r); perr != nil || len(past) > 0 {
				return r, past, perr
			}
		}
		return n, nil, fmt.Errorf("%w; the store's pasts keep each round as it ran, undone or not: see one with `cairn diff --round N %s`", err, agent)
	}
	if round != 0 {
		if nerr := e.noRound(agent, round); nerr != nil {
			return n, nil, noChangesError{nerr}
		}
	}
	if round == 0 {
		var trimmed int
		if round, trimmed = e.lastPastChange(agent); round == 0 {
			if perr := e.pastsReadable(agent); perr != nil {
				return n, nil, perr
			}
			if trimmed > 0 {
				return n, out, trimmedNoChange(agent, trimmed, err)
			}
		}
	}
	if round == 0 {
		return n, out, err
	}
	past, known, perr := e.pastChanges(agent, round)
	switch {
	case perr == nil && len(past) > 0:
		return round, past, nil
	case perr == nil && known:
		return n, nil, fmt.Errorf("agent %q round %d: %w: the store's pasts say it changed no file", agent, round, ErrNoChanges)
	case errors.Is(perr, checkpoint.ErrNoPast):
		return n, out, fmt.Errorf("%w; nor in the store's pasts: %w", err, perr)
	case perr != nil && !errors.Is(perr, ErrNoCopy):
		return round, nil, perr
	}
	return n, out, err
}

// changedSinceUndo is the last round the store's pasts say changed the
// workspace when it was run after the last undo on this node took back
// every round the node kept, or 0. Undo keeps no record of the rounds it
// took back; the directory of the node's kept changes, which that undo
// left empty, was last changed by it, so its time is the undo's, by this
// node's clock. The runs that started after it, each of them (the last
// ones), ran their rounds after it, and no undo here took them back. A
// run of another node whose clock is behind may seem to have started
// before the undo: its rounds are then not shown, as before; one whose
// clock is ahead may seem to have started after it, but no undo here
// takes back the rounds of another node, and the runs after it count
// only if they seem so too.
func (e *Engine) changedSinceUndo(agent string) int {
	fi, err := os.Stat(e.changesRoot(agent))
	if err != nil {
		return 0
	}
	rec, err := e.store.Read(agent)
	if err != nil {
		return 0
	}
	since := -1
	for _, r := range slices.Backward(rec.State.Runs) {
		if !r.Started.After(fi.ModTime()) {
			break
		}
		since = r.FirstRound
	}
	if r, _ := e.lastPastChange(agent); since >= 0 && r > since {
		return r
	}
	return 0
}

// pastsReadable is the error of reading the agent's pasts, if the store
// keeps them and they cannot be read.
func (e *Engine) pastsReadable(agent string) error {
	tl, ok := e.store.(checkpoint.Timeline)
	if !ok {
		return nil
	}
	_, err := tl.Pasts(agent)
	return err
}

// keptChanges is Changes from the changes this node kept.
func (e *Engine) keptChanges(agent string, round int) (int, []FileChange, error) {
	if err := e.ready(); err != nil {
		return 0, nil, err
	}
	if !e.store.Exists(agent) {
		return 0, nil, fmt.Errorf("agent %q: %w", agent, checkpoint.ErrNotFound)
	}
	// An agent every other command refuses (damaged, lost data, a newer
	// schema) is refused here too, before its kept changes are shown.
	rec, err := e.store.Read(agent)
	if err != nil {
		return 0, nil, err
	}
	if err := e.checkStaging(); err != nil {
		return 0, nil, err
	}
	if e.keptForAnother(agent, rec.State) {
		return 0, nil, fmt.Errorf("agent %q: %w (this node keeps none of its changes: what it keeps is of an agent of this id that was removed)", agent, ErrNoChanges)
	}
	root := e.changesRoot(agent)
	if round == 0 {
		rounds := changedRounds(root)
		if len(rounds) == 0 {
			if _, err := os.Stat(root); err == nil {
				// Made for the first change kept, and left empty only
				// by undo, which removes each round it takes back.
				return 0, nil, fmt.Errorf("agent %q: %w (%w, which are of the last %d rounds that changed files)", agent, ErrNoChanges, errUndidAll, keepRounds)
			}
			return 0, nil, fmt.Errorf("agent %q: %w (none of its last %d rounds changed a file)", agent, ErrNoChanges, keepRounds)
		}
		round = rounds[len(rounds)-1]
	}
	dir := filepath.Join(root, fmt.Sprintf("round-%d", round))
	paths, calls, err := keptCallsOf(dir, rec.State)
	if err != nil {
		return round, nil, fmt.Errorf("agent %q round %d: %w (kept: the last %d rounds that changed files)", agent, round, ErrNoChanges, keepRounds)
	}
	var out []FileChange
	for i, p := range paths {
		changes, err := readCallChanges(p, calls[i])
		if err != nil {
			return round, nil, fmt.Errorf("agent %q round %d: %w", agent, round, err)
		}
		out = append(out, changes...)
	}
	return round, out, nil
}

func readCallChanges(path, call string) ([]FileChange, error) {
	idx, err := indexKeptChanges(path)
	var effects overlay.Effects
	if err == nil {
		effects, err = overlay.DecodeEffects(idx.manifest)
	}
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &pathErr):
		return nil, fmt.Errorf("changes of call %s: %w", call, err) // it names the file
	case err != nil:
		return nil, damagedKept(call, path, err)
	}
	var out []FileChange
	for _, e := range effects {
		fc := FileChange{Call: call, Path: e.Path, Op: string(e.Op), BeforeSize: -1, AfterSize: -1}
		if e.Base.IsFile() {
			fc.before, fc.BeforeSize = checkedSide(call, path, e.Path, "before", idx.before[e.Path], e.Base), e.Base.Size
		}
		if e.New.IsFile() {
			fc.after, fc.AfterSize = checkedSide(call, path, e.Path, "after", idx.after[e.Path], e.New), e.New.Size
		}
		out = append(out, fc)
	}
	return out, nil
}

// damagedKept is the error of the kept changes of call, the record at
// path, found damaged as err says.
func damagedKept(call, path string, err error) error {
	return fmt.Errorf("the changes kept of call %s, %s, are damaged (the file was cut short or overwritten): %w; "+
		"restore it from a backup to see this round's changes here; the other rounds' are shown (`cairn diff --round N`)", call, path, err)
}

// checkedSide is c, what the kept changes of call, the record at record,
// hold of file before or after the call (side), checked against v, the
// version the call's manifest says: a side the record lacks, or one read
// whole whose size or sha256 differs from v's, is refused as damaged, as
// undo refuses to restore it. One read in part (larger than it was asked
// for) is not checked: it is too large to show.
func checkedSide(call, record, file, side string, c content, v overlay.Version) content {
	return func(n int64) ([]byte, error) {
		if c == nil {
			return nil, damagedKept(call, record, fmt.Errorf("it keeps no file %s the call, which its manifest says there was", side))
		}
		b, err := c(n)
		if err != nil || int64(len(b)) >= n {
			return b, err
		}
		switch {
		case int64(len(b)) != v.Size:
			return nil, damagedKept(call, record, fmt.Errorf("it keeps %d bytes of the file %s the call, where its manifest says %d", len(b), side, v.Size))
		case sha256.Sum256(b) != v.Hash:
			return nil, damagedKept(call, record, fmt.Errorf("what it keeps of the file %s the call is not what its manifest says (another sha256)", side))
		}
		return b, nil
	}
}
