package checkpoint

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// An export is one file that carries an agent from one store to another:
// `cairn export` writes it, `cairn import` reads it into any store.
//
//	"cairn-export\n"   the magic line
//	CBOR               one Archive
//
// The Archive holds the agent's state at its last boundary, the records of
// its interrupted round (each with its type and its CBOR payload, as a
// journal frame holds them), its bookmarks, its event history, and every
// blob its states name: agent files, scripts, tool modules and the
// bookmarks' workspace archives. From version 2, when the store keeps
// them, it holds the agent's pasts too (see Timeline) and the blobs they
// name: the workspace travels in it, as it was at every boundary. From
// version 3 it holds the agent's sub-agents too, each an Archive of its
// own (Children), so a tree of agents travels whole.

// archiveMagic opens every export.
const archiveMagic = "cairn-export\n"

// archiveVersion is the version of the export format this build writes; a
// reader refuses a newer one.
const archiveVersion = 3

// archiveVersionOf is the oldest version that holds what a has: 1 unless
// it carries pasts or sub-agents, so that an older cairn still reads an
// export of an agent that has neither.
func archiveVersionOf(a *Archive) int {
	if len(a.Children) > 0 {
		return 3
	}
	if len(a.Pasts) > 0 || a.State.WorkspaceBase != "" {
		return 2
	}
	return 1
}

// maxArchiveSize bounds what ReadArchive reads, so that a damaged or
// hostile file cannot make it allocate without limit.
const maxArchiveSize = 1 << 30

// Archive is one exported agent.
type Archive struct {
	Version   int               `cbor:"1,keyasint"`
	Agent     string            `cbor:"2,keyasint"`
	State     *State            `cbor:"3,keyasint"`
	Tail      []ArchivedRecord  `cbor:"4,keyasint,omitempty"`
	Bookmarks []Bookmark        `cbor:"5,keyasint,omitempty"`
	Events    []byte            `cbor:"6,keyasint,omitempty"`
	Blobs     map[string][]byte `cbor:"7,keyasint,omitempty"`
	Pasts     []Past            `cbor:"8,keyasint,omitempty"`
	// Children are the agent's sub-agents, each with its own.
	Children []*Archive `cbor:"9,keyasint,omitempty"`
}

// ArchivedRecord is one record of the interrupted round.
type ArchivedRecord struct {
	Type    RecordType `cbor:"1,keyasint"`
	Payload []byte     `cbor:"2,keyasint"`
}

// Export reads an agent from s into an Archive, changing nothing.
// ErrNotFound for an unknown agent; a blob its states name and the store
// lacks is an error too, since the archive could not be resumed.
func Export(s Store, agent string) (*Archive, error) {
	return exportTree(s, agent, 0)
}

// exportOne is Export of the agent alone, without its sub-agents.
func exportOne(s Store, agent string) (*Archive, error) {
	rec, err := s.Read(agent)
	if err != nil {
		return nil, err
	}
	a := &Archive{Version: archiveVersion, Agent: agent, State: rec.State, Blobs: map[string][]byte{}}
	for _, r := range rec.Tail {
		payload, err := encodeRecord(r)
		if err != nil {
			return nil, fmt.Errorf("export agent %q: %w", agent, err)
		}
		a.Tail = append(a.Tail, ArchivedRecord{Type: r.Type, Payload: payload})
	}
	if a.Bookmarks, err = s.Bookmarks(agent); err != nil {
		return nil, fmt.Errorf("export agent %q: %w", agent, err)
	}
	if a.Events, err = readEvents(s, agent); err != nil {
		return nil, fmt.Errorf("export agent %q: %w", agent, err)
	}
	if tl, ok := s.(Timeline); ok {
		if a.Pasts, err = tl.Pasts(agent); err != nil {
			return nil, fmt.Errorf("export agent %q: %w", agent, err)
		}
	}
	a.Version = archiveVersionOf(a)
	// Twice: the manifests' files are named once the manifests are in.
	for range 2 {
		for _, d := range a.digests() {
			if _, ok := a.Blobs[d]; ok {
				continue
			}
			if a.Blobs[d], err = s.Blob(d); err != nil {
				return nil, exportRemoved(s, a, err)
			}
		}
	}
	// What the last round wrote, for a past of it that a crash lost
	// (BoundaryWrites): carried when the store has it, as no import needs
	// it to be there.
	for _, d := range BoundaryWrites(a.State) {
		if _, ok := a.Blobs[d]; !ok {
			if b, err := s.Blob(d); err == nil {
				a.Blobs[d] = b
			}
		}
	}
	return a, nil
}

// exportRemoved is the error of the export a of an agent that failed to
// read a blob (err) its pasts, bookmarks or states name. The export takes
// no lock: when the blob was not found because `cairn gc --keep-rounds`
// trimmed the pasts since (TrimmedSince), or `cairn gc --keep-bookmarks`
// removed a bookmark it read, each with the blobs only they named, it
// says so and to export again, which carries what gc kept.
func exportRemoved(s Store, a *Archive, err error) error {
	if !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("export agent %q: %w", a.Agent, err)
	}
	if now, trimmed := TrimmedSince(s, a.Agent, a.Pasts); trimmed {
		return fmt.Errorf("export agent %q: `cairn gc --keep-rounds` removed its rounds before %d while the export read them: "+
			"nothing was written; export it again, which carries the rounds kept, %d to %d", a.Agent, now[0].Round, now[0].Round, now[len(now)-1].Round)
	}
	if now, berr := s.Bookmarks(a.Agent); berr == nil {
		kept := map[string]bool{}
		var left []string
		for _, b := range now {
			kept[b.Label] = true
			left = append(left, b.Label)
		}
		var gone []string
		for _, b := range a.Bookmarks {
			if !kept[b.Label] {
				gone = append(gone, b.Label)
			}
		}
		if len(gone) > 0 {
			return fmt.Errorf("export agent %q: `cairn gc --keep-bookmarks` removed its bookmarks %s while the export read them: "+
				"nothing was written; export it again, which carries the bookmarks kept (%s)", a.Agent, strings.Join(gone, ", "), cmp.Or(strings.Join(left, ", "), "none"))
		}
	}
	return fmt.Errorf("export agent %q: %w", a.Agent, err)
}

// BoundaryWrites lists the blobs of the files st's last round wrote into
// the workspace, from its file pool. A process stopped between a round's
// commit and its past leaves the agent's newest past a round behind; the
// next resume makes that past from these entries (host's repairPast), and
// a resume on another node then needs their blobs to rebuild the
// workspace.
func BoundaryWrites(st *State) []string {
	var out []string
	for _, f := range st.Files {
		if f.Round == st.Round && f.Op == "write" && !f.Outside {
			out = append(out, "sha256:"+hex.EncodeToString(f.Hash[:]))
		}
	}
	return out
}

func readEvents(s Store, agent string) ([]byte, error) {
	r, err := s.ReadEvents(agent)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// digests lists the blobs the archive's states and bookmarks name.
func (a *Archive) digests() []string {
	seen := map[string]bool{}
	markDefinition(a.State.Definition, seen)
	for _, r := range a.Tail {
		if r.Type == RecDefine {
			if rec, err := decodeRecord(r.Type, r.Payload); err == nil {
				markDefinition(*rec.Definition, seen)
			}
		}
	}
	for _, b := range a.Bookmarks {
		if b.State != nil {
			markDefinition(b.State.Definition, seen)
		}
		seen[b.Workspace] = true
	}
	pasts := a.Pasts
	if a.State.WorkspaceBase != "" {
		pasts = append(pasts[:len(pasts):len(pasts)], Past{Base: a.State.WorkspaceBase})
	}
	pastDigests(pasts, seen)
	for _, p := range pasts {
		if m, err := decodeManifest(a.Blobs[p.Base]); p.Base != "" && err == nil {
			for _, e := range m {
				seen[e.Digest] = true
			}
		}
	}
	delete(seen, "")
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// WriteTo writes the archive as an export file.
//
// # Errors
//
// An export larger than ReadArchive reads (maxArchiveSize) is refused
// before anything is written: no import could read it.
func (a *Archive) WriteTo(w io.Writer) (int64, error) {
	data, err := encMode.Marshal(a)
	if err != nil {
		return 0, fmt.Errorf("encode export of agent %q: %w", a.Agent, err)
	}
	if size := len(archiveMagic) + len(data); size > maxArchiveSize {
		return 0, fmt.Errorf("export of agent %q: it comes to %d bytes, more than the %d bytes an import reads, so nothing was written; "+
			"move the agent with its store instead (a copy of the store's directory, or a dump of its database)", a.Agent, size, maxArchiveSize)
	}
	n, err := io.WriteString(w, archiveMagic)
	if err != nil {
		return int64(n), err
	}
	m, err := w.Write(data)
	return int64(n + m), err
}

// archiveCorrupt is damage in an export file: the reader knows no offset
// in it, and what to do is to export or copy the file again.
func archiveCorrupt(file, reason string) error {
	return &CorruptError{File: file, Offset: -1, Reason: reason,
		Advice: "nothing was imported — export the agent again, or copy the export file again if it was damaged on the way"}
}

// ReadArchive reads an export file and checks all of it: its version, the
// agent's id, the states' schemas, that every record decodes and replays
// on the state, and that every blob matches its digest and every blob the
// states name is there.
//
// # Errors
//
// A *FutureSchemaError for an export or a state newer than this build; a
// *CorruptError for anything else wrong with the bytes.
func ReadArchive(r io.Reader) (*Archive, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxArchiveSize+1))
	if err != nil {
		return nil, fmt.Errorf("read export: %w", err)
	}
	corrupt := func(reason string) error { return archiveCorrupt("export", reason) }
	if len(data) > maxArchiveSize {
		return nil, corrupt(fmt.Sprintf("larger than %d bytes", maxArchiveSize))
	}
	body, ok := bytes.CutPrefix(data, []byte(archiveMagic))
	if !ok {
		return nil, corrupt("not a cairn export (it does not start with \"cairn-export\")")
	}
	var a Archive
	if err := decMode.Unmarshal(body, &a); errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, corrupt(fmt.Sprintf("it ends early, as a file cut short does (%d bytes)", len(data)))
	} else if err != nil {
		return nil, corrupt(err.Error())
	}
	if err := a.check(); err != nil {
		return nil, err
	}
	return &a, nil
}

// check refuses an archive that could not be imported whole, its
// sub-agents' included.
func (a *Archive) check() error {
	if err := a.checkOne(); err != nil {
		return err
	}
	return a.checkChildren()
}

// checkOne is check of the agent alone.
func (a *Archive) checkOne() error {
	corrupt := func(reason string) error { return archiveCorrupt("export of agent "+a.Agent, reason) }
	if a.Version > archiveVersion {
		return &FutureSchemaError{File: "export", Version: a.Version, Supported: archiveVersion}
	}
	if a.Version < 1 || a.State == nil {
		return corrupt("no version or no state")
	}
	if err := CheckID(a.Agent); err != nil {
		return corrupt(err.Error())
	}
	if a.State.Schema > schemaVersion {
		return &FutureSchemaError{File: "export of agent " + a.Agent, Version: a.State.Schema, Supported: schemaVersion}
	}
	if a.State.Agent != a.Agent {
		return corrupt(fmt.Sprintf("its state is of agent %q", a.State.Agent))
	}
	if _, err := a.tail(); err != nil {
		return corrupt(err.Error())
	}
	for _, b := range a.Bookmarks {
		if err := CheckLabel(b.Label); err != nil {
			return corrupt(err.Error())
		}
		if err := b.check(a.Agent); err != nil {
			return err
		}
	}
	if err := a.checkPasts(); err != nil {
		return err
	}
	for d, data := range a.Blobs {
		if BlobDigest(data) != d {
			return corrupt("blob " + d + " does not match its digest")
		}
	}
	for _, d := range a.digests() {
		if _, ok := a.Blobs[d]; !ok {
			return corrupt("blob " + d + " is named and missing")
		}
	}
	return nil
}

// checkPasts refuses pasts of a newer schema, a manifest that does not
// decode, and a change outside the workspace.
func (a *Archive) checkPasts() error {
	for _, p := range a.Pasts {
		what := fmt.Sprintf("past round %d of agent %s", p.Round, a.Agent)
		if p.State != nil && p.State.Schema > schemaVersion {
			return &FutureSchemaError{File: what, Version: p.State.Schema, Supported: schemaVersion}
		}
		if p.Base != "" {
			if _, err := decodeManifest(a.Blobs[p.Base]); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
		for _, c := range p.Changes {
			if err := checkWorkspacePath(c.Path); err != nil {
				return archiveCorrupt("export of agent "+a.Agent, what+": "+err.Error())
			}
		}
	}
	return nil
}

// Records are the interrupted round's records, decoded; an error for a
// record that does not decode or replay on the state.
func (a *Archive) Records() ([]Record, error) { return a.tail() }

// tail decodes the interrupted round's records and replays them on a copy
// of the state, as recovery would.
func (a *Archive) tail() ([]Record, error) {
	st, err := a.State.Clone()
	if err != nil {
		return nil, err
	}
	r := replay{st: st}
	recs := make([]Record, 0, len(a.Tail))
	for i, ar := range a.Tail {
		rec, err := decodeRecord(ar.Type, ar.Payload)
		if err == nil {
			err = r.add(rec)
		}
		if err != nil {
			return nil, fmt.Errorf("record %d of the interrupted round: %w", i, err)
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// Import recreates the archived agent in s, under its own id, holding its
// lock as h while it writes, and those of its sub-agents, every one taken
// before anything is written. Blobs go in first, then the state and the
// interrupted round, then the bookmarks and the event history, which is
// the archive's alone (any history the id had is dropped first). An
// import that fails partway removes the agents it made, their event
// histories with them, so that it can be run again and leave each event
// once; blobs it put stay, for gc.
//
// # Errors
//
// ErrExists when s has an agent of an id of the archive's; ErrLocked when
// another process holds one. Nothing is written then.
func Import(s Store, a *Archive, h Holder) error {
	if err := a.check(); err != nil {
		return err
	}
	if id := a.existing(s); id != "" {
		return fmt.Errorf("import agent %q: %w; remove it or import into another store", id, ErrExists)
	}
	locks, err := lockTree(s, a, h)
	defer func() {
		for _, l := range slices.Backward(locks) {
			l.Unlock()
		}
	}()
	if err != nil {
		return err
	}
	if id := a.existing(s); id != "" {
		return fmt.Errorf("import agent %q: %w; remove it or import into another store", id, ErrExists)
	}
	var made []string
	err = importOne(s, a, &made)
	if err == nil {
		err = importChildren(s, a, &made)
	}
	if err == nil {
		return nil
	}
	var left []string
	for _, id := range slices.Backward(made) {
		if rerr := removeImported(s, id); rerr != nil {
			left = append(left, id)
			err = errors.Join(err, rerr)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("%w; the import stopped partway and agents %s it made could not be removed: "+
			"they are incomplete, and another import of them is refused as existing", err, strings.Join(left, ", "))
	}
	return fmt.Errorf("%w; nothing of the import was kept, import again once this is fixed", err)
}

// removeImported removes an agent an import made, and its event
// history, which Remove keeps; the import holds its lock.
func removeImported(s Store, id string) error {
	return errors.Join(s.Remove(id), s.DropEvents(id))
}

// lockTree takes the lock of a's agent and of each of its sub-agents,
// parents first, and returns those it took: all of them, or, with the
// error of the first it could not take, those before it, for the caller
// to let go of.
func lockTree(s Store, a *Archive, h Holder) ([]Lock, error) {
	lock, err := s.Lock(a.Agent, h)
	if err != nil {
		return nil, err
	}
	locks := []Lock{lock}
	for _, c := range a.Children {
		more, err := lockTree(s, c, h)
		locks = append(locks, more...)
		if err != nil {
			return locks, err
		}
	}
	return locks, nil
}

// importOne is Import of the agent alone, without its sub-agents, whose
// lock the import holds; it adds the agent to made once its state is
// written.
func importOne(s Store, a *Archive, made *[]string) error {
	tail, _ := a.tail()
	for _, d := range sortedKeys(a.Blobs) {
		if _, err := s.PutBlob(a.Blobs[d]); err != nil {
			return fmt.Errorf("import agent %q: %w", a.Agent, err)
		}
	}
	*made = append(*made, a.Agent)
	if err := importState(s, a.Agent, a.State, tail); err != nil {
		return fmt.Errorf("import agent %q: %w", a.Agent, err)
	}
	for _, b := range a.Bookmarks {
		if err := s.PutBookmark(a.Agent, b); err != nil {
			return fmt.Errorf("import agent %q: %w", a.Agent, err)
		}
	}
	if tl, ok := s.(Timeline); ok {
		for _, p := range a.Pasts {
			if err := tl.PutPast(a.Agent, p); err != nil {
				return fmt.Errorf("import agent %q: %w", a.Agent, err)
			}
		}
	}
	return importEvents(s, a.Agent, a.Events)
}

func importState(s Store, agent string, st *State, tail []Record) error {
	log, err := s.Create(agent, st)
	if err != nil {
		return err
	}
	if len(tail) > 0 {
		err = errors.Join(log.Append(tail...), log.Sync())
	}
	return errors.Join(err, log.Close())
}

// importEvents makes the agent's event history events: what the id's
// history held before (a failed import's lines, an earlier agent's) is
// dropped, not appended to.
func importEvents(s Store, agent string, events []byte) error {
	if err := s.DropEvents(agent); err != nil {
		return fmt.Errorf("import event history of agent %q: %w", agent, err)
	}
	if len(events) == 0 {
		return nil
	}
	w, err := s.Events(agent)
	if err != nil {
		return fmt.Errorf("import event history of agent %q: %w", agent, err)
	}
	_, err = w.Write(events)
	if err = errors.Join(err, w.Close()); err != nil {
		return fmt.Errorf("import event history of agent %q: %w", agent, err)
	}
	return nil
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
