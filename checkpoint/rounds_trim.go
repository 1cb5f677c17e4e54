package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// An agent's event history and its pasts grow by every round it runs, and
// unlike its journal and snapshots hold nothing a resume needs but the
// newest past. Retention.Rounds keeps only the last rounds of both: each
// file is rewritten without the older rounds (a temp file beside it,
// synced, renamed over it, the directory synced), so that a crash leaves
// the old file or the new one, whole.
//
// The pasts kept start one round earlier than the rounds kept, at the
// floor: the boundary before the oldest round kept, whose past is given
// the whole workspace there (a Base) and Trimmed, so that every round
// kept can be forked at, diffed and its messages read, though the pasts
// it was rebuilt from are gone. Where the floor's workspace cannot be
// rebuilt (a past lost, a gap), the pasts are cut at the newest whole
// workspace at or before it instead, which every later round needs: a
// round kept never loses what travel needs.
//
// The event history loses its lines of the rounds before the oldest kept
// (and of the runs that ended before it), and starts with a warning that
// says so (TrimmedEvents), which `cairn events` and the web view show.

// roundsPlan is what trimRounds writes of an agent: nil when nothing is
// trimmed.
type roundsPlan struct {
	first int // the oldest round kept

	// events is the line the new event history starts with, before the
	// old one's lines from eventsFrom on, and eventsCut how many bytes it
	// loses; nil when it stays.
	events     []byte
	eventsFrom int64
	eventsCut  int64

	// past and index are the new past file and its index, pastCut how
	// many bytes it lost, manifest the floor's workspace manifest (a
	// blob to store before the past that names it; nil when the floor had
	// a Base), and pasts the pasts kept; past is nil when they stay.
	past, index []byte
	pastCut     int64
	manifest    []byte
	pasts       []Past
	base        string // the state's WorkspaceBase
	// indexOnly: the past file is trimmed already, and its index is
	// replaced by index.
	indexOnly bool
}

// planRounds plans the trim of the agent to its last rounds rounds,
// reading its state, pasts and history and writing nothing. Nil when
// nothing is to be trimmed. It fails where the pasts cannot be read.
func (s *FileStore) planRounds(id string, rounds int) (*roundsPlan, error) {
	if rounds <= 0 {
		return nil, nil
	}
	rec, err := s.Read(id)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	floor := rec.State.Round - rounds
	if floor < 1 {
		return nil, nil
	}
	plan := &roundsPlan{first: floor + 1, base: rec.State.WorkspaceBase}
	dir := filepath.Join(s.dir, "agents", id)
	if err := plan.planPasts(s, id, filepath.Join(dir, pastFile), floor); err != nil {
		return nil, fmt.Errorf("the pasts of its rounds: %w", err)
	}
	if err := plan.planEvents(id, filepath.Join(dir, eventsFile)); err != nil {
		return nil, fmt.Errorf("its event history: %w", err)
	}
	if plan.past == nil && plan.events == nil && !plan.indexOnly {
		return nil, nil
	}
	return plan, nil
}

// planPasts plans the past file without the pasts of the rounds before
// floor, and the floor's past with the whole workspace there.
func (p *roundsPlan) planPasts(s Store, id, name string, floor int) error {
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	frames, _ := unsyncedFrames(data)
	rounds := make([]int, len(frames))
	all := make([]Past, 0, len(frames))
	for i, f := range frames {
		if f.typ != pastFrame {
			return &CorruptError{File: name, Offset: f.off, Reason: fmt.Sprintf("frame of type %d", f.typ)}
		}
		past, err := decodePast(id, f.payload)
		if err != nil {
			return err
		}
		rounds[i] = past.Round
		all = append(all, past)
	}
	all = sortPasts(all)
	floorPast, ok := p.floorOf(s, all, id, floor)
	if !ok || (floorPast.Round == all[0].Round && !all[0].Trimmed) {
		p.manifest = nil
		return nil // nothing before it, or no round to cut at
	}
	var b bytes.Buffer
	if err := appendEncodedFrame(&b, pastFrame, floorPast); err != nil {
		return err
	}
	var index []byte
	p.pasts = []Past{floorPast}
	for i, f := range frames {
		if rounds[i] <= floorPast.Round {
			continue
		}
		off := int64(b.Len())
		b.Write(data[f.off : f.off+frameHeader+int64(len(f.payload))])
		if rounds[i]%pastIndexEvery == 0 {
			e := pastIndex{off: off, round: int64(rounds[i]), crc: crcOf(b.Bytes()[off:])}
			index = append(index, e.encode()...)
		}
	}
	for _, past := range all {
		if past.Round > floorPast.Round {
			p.pasts = append(p.pasts, past)
		}
	}
	if bytes.Equal(b.Bytes(), data) {
		// Trimmed already: only an index that a kill left behind, of the
		// file before, is replaced.
		p.manifest, p.pasts = nil, nil
		if have, _ := os.ReadFile(indexOf(name)); !bytes.Equal(have, index) {
			p.index, p.indexOnly = index, true
		}
		return nil
	}
	p.past, p.index, p.pastCut = b.Bytes(), index, int64(len(data))-int64(b.Len())
	return nil
}

// crcOf is the checksum a frame's header holds.
func crcOf(frame []byte) uint32 { return binary.LittleEndian.Uint32(frame[5:9]) }

// digestOf is the digest PutBlob stores data under.
func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// floorOf is the past the trimmed file starts with: the floor's, with
// the whole workspace at it; or, where that cannot be rebuilt, the newest
// past at or before the floor that holds a whole workspace. False when
// there is none: every past is kept.
func (p *roundsPlan) floorOf(s Store, all []Past, id string, floor int) (Past, bool) {
	if len(all) == 0 || all[0].Round > floor {
		return Past{}, false
	}
	if at, err := PastAt(all, id, floor); err == nil {
		if at.Base != "" {
			at.Changes, at.Trimmed = nil, true
			return at, true
		}
		if m, err := WorkspaceAt(s, all, id, floor); err == nil {
			if m == nil {
				m = []WorkspaceEntry{}
			}
			data, err := EncodeManifest(m)
			if err == nil {
				p.manifest = data
				at.Base, at.Changes, at.Trimmed = digestOf(data), nil, true
				return at, true
			}
		}
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Round <= floor && all[i].Base != "" {
			at := all[i]
			at.Changes, at.Trimmed = nil, true
			return at, true
		}
	}
	return Past{}, false
}

// TrimmedEvents is the warning an event history trimmed by Retention.Rounds
// starts with, as a line of JSON (the fields of host.Event it has): of no
// run, so that a playback of one run keeps it, with the oldest round kept
// and how many lines were removed, in all, so that a line keeps its
// number.
type TrimmedEvents struct {
	Type    string    `json:"type"`
	Time    time.Time `json:"time"`
	Agent   string    `json:"agent"`
	Run     string    `json:"run"`
	Round   int       `json:"round,omitempty"`
	Text    string    `json:"text,omitempty"`
	Removed int64     `json:"removed,omitempty"`
}

// eventOf is what trimming reads of a line of the history.
type eventOf struct {
	Type    string    `json:"type"`
	Time    time.Time `json:"time"`
	Agent   string    `json:"agent"`
	Run     string    `json:"run"`
	Round   int       `json:"round"`
	Removed int64     `json:"removed"`
}

// planEvents plans the history without the lines before the oldest round
// kept: from the agent's first line of that round or a later one (a line
// of a sub-agent counts its own rounds), with the lines of its run just
// before it that belong to no earlier round (its start, the boundary it
// loaded, its resume). The history is read a line at a time, never whole:
// the first trim of a history of months may be gigabytes.
func (p *roundsPlan) planEvents(id, name string) error {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	notice, off, err := HistoryCut(f, id, p.first)
	if err != nil || notice == nil {
		return err
	}
	p.events, p.eventsFrom = notice, off
	p.eventsCut = off - int64(len(p.events))
	return nil
}

// HistoryCut reads the event history r of agent id a line at a time and
// says where Retention.Rounds cuts it to keep the rounds from first on:
// the line the history then starts with (a TrimmedEvents warning, with
// its newline) in place of its bytes before off. A nil line when nothing
// is cut.
func HistoryCut(r io.Reader, id string, first int) (line []byte, off int64, err error) {
	cut, err := cutOf(bufio.NewReader(r), id, first)
	if err != nil || cut.lines == 0 {
		return nil, 0, err
	}
	notice, err := json.Marshal(TrimmedEvents{Type: "warning", Time: cut.time, Agent: id, Round: first, Removed: cut.removed,
		Text: fmt.Sprintf("`cairn gc --keep-rounds` removed the events of the rounds before round %d (%d lines); the history starts here", first, cut.removed)})
	if err != nil {
		return nil, 0, err
	}
	return append(notice, '\n'), cut.off, nil
}

// KeptPasts are the pasts that Retention.Rounds keeps of all, agent id's
// pasts by round, trimmed at the boundary floor (see planPasts): the
// floor's past given the whole workspace there and marked Trimmed, then
// every later one; manifest is the floor's workspace manifest, a blob to
// store before the past that names it (nil when its Base was there).
// False when nothing is cut.
func KeptPasts(s Store, all []Past, id string, floor int) (kept []Past, manifest []byte, ok bool) {
	var p roundsPlan
	floorPast, ok := p.floorOf(s, all, id, floor)
	if !ok || floorPast.Round == all[0].Round {
		return nil, nil, false // nothing before it, or trimmed there already
	}
	kept = []Past{floorPast}
	for _, past := range all {
		if past.Round > floorPast.Round {
			kept = append(kept, past)
		}
	}
	return kept, p.manifest, true
}

// MarkKeptPasts marks in inUse the blobs that kept, the pasts KeptPasts
// keeps of an agent whose state's WorkspaceBase is base, name, as
// MarkPasts does of the pasts in the store; the floor's manifest is read
// from manifest, which may not be stored yet.
func MarkKeptPasts(s Store, kept []Past, manifest []byte, base string, inUse map[string]bool) error {
	p := roundsPlan{pasts: kept, manifest: manifest, base: base}
	return p.mark(s, inUse)
}

// historyCut is where a history is cut: the offset of its first line
// kept, how many lines go (an earlier trim's warning not counted), how
// many lines, in all, were removed (those the warning counts too), and
// the time of the first line kept.
type historyCut struct {
	off            int64
	lines, removed int64
	time           time.Time
}

// cutOf reads the history r a line at a time and finds where it is cut
// for rounds from first on; lines 0 when nothing is to be cut.
func cutOf(r *bufio.Reader, id string, first int) (historyCut, error) {
	var off, n, earlier int64
	var block historyCut // the lines of one run since the last that ends a round or a run
	blockRun := ""
	for ; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return historyCut{}, nil // no line of a round kept: none to tell them from
			}
			return historyCut{}, err
		}
		var e eventOf
		json.Unmarshal(bytes.TrimSuffix(line, []byte("\n")), &e)
		if n == 0 && e.Type == "warning" && e.Run == "" && e.Removed > 0 {
			earlier = e.Removed // an earlier trim's warning
		}
		if e.Type != "" && e.Agent == id && e.Round >= first { // not a sub-agent's round
			cut := historyCut{off: off, lines: n, time: e.Time}
			if blockRun != "" && blockRun == e.Run {
				cut = block
			}
			cut.removed = cut.lines
			if earlier > 0 {
				cut.removed += earlier - 1
				if cut.lines == 1 {
					return historyCut{}, nil // trimmed there already
				}
			}
			if cut.time.IsZero() {
				cut.time = time.Now().UTC()
			}
			return cut, nil
		}
		switch {
		case e.Type == "" || e.Run == "" || e.Type == "round_end" || e.Type == "run_end":
			blockRun = ""
		case e.Run != blockRun:
			block, blockRun = historyCut{off: off, lines: n, time: e.Time}, e.Run
		}
		off += int64(len(line))
	}
}

// trimRounds writes what plan trims of the agent, or, in a dry run,
// only reports it: the floor's manifest first, then the past file, its
// index, and the history, each replaced crash-atomically.
func (s *FileStore) trimRounds(id string, plan *roundsPlan, dryRun bool, c *Collected) error {
	if plan == nil {
		return nil
	}
	dir := filepath.Join(s.dir, "agents", id)
	if plan.indexOnly && !dryRun {
		if err := writeAtomic(filepath.Join(dir, pastIndexFile), plan.index); err != nil {
			return fmt.Errorf("index the pasts from round %d: %w", plan.first-1, err)
		}
	}
	if plan.past != nil {
		if plan.manifest != nil && !dryRun {
			if _, err := s.PutBlob(plan.manifest); err != nil {
				return fmt.Errorf("trim the rounds before %d: %w", plan.first, err)
			}
		}
		if err := replaceTrimmed(filepath.Join(dir, pastFile), plan.past, dryRun); err != nil {
			return fmt.Errorf("trim the rounds before %d: %w", plan.first, err)
		}
		// An index that lags costs decoding, never a wrong past
		// (readPastTail): it is replaced after the file it indexes.
		if err := replaceTrimmed(filepath.Join(dir, pastIndexFile), plan.index, dryRun); err != nil {
			return fmt.Errorf("trim the rounds before %d: %w", plan.first, err)
		}
		c.Trimmed = append(c.Trimmed, Trimmed{Path: filepath.Join("agents", id, pastFile), Round: plan.first, Bytes: plan.pastCut})
		c.Bytes += plan.pastCut
	}
	if plan.events != nil && !dryRun {
		if err := replaceHistory(filepath.Join(dir, eventsFile), plan.events, plan.eventsFrom); err != nil {
			return fmt.Errorf("trim the events before round %d: %w", plan.first, err)
		}
	}
	if plan.events != nil {
		c.Trimmed = append(c.Trimmed, Trimmed{Path: filepath.Join("agents", id, eventsFile), Round: plan.first, Bytes: plan.eventsCut})
		c.Bytes += plan.eventsCut
	}
	return nil
}

// replaceTrimmed replaces name with data, crash-atomically (writeAtomic),
// unless dryRun.
func replaceTrimmed(name string, data []byte, dryRun bool) error {
	if dryRun {
		return nil
	}
	return writeAtomic(name, data)
}

// replaceHistory replaces the history name with head and its own bytes
// from off on, crash-atomically: a temp file beside it, written a piece
// at a time, synced, renamed over it, the directory synced.
func replaceHistory(name string, head []byte, off int64) error {
	old, err := os.Open(name)
	if err != nil {
		return err
	}
	defer old.Close()
	f, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(head)
	if werr == nil {
		_, werr = io.Copy(f, io.NewSectionReader(old, off, 1<<62))
	}
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	syncpoint.Synced(tmp)
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(name))
}

// mark marks the blobs the pasts plan keeps name, as MarkPasts does of
// the pasts in the store, the floor's manifest read from the plan.
func (p *roundsPlan) mark(s Store, inUse map[string]bool) error {
	pasts := p.pasts
	if p.base != "" {
		pasts = append(pasts[:len(pasts):len(pasts)], Past{Base: p.base})
	}
	pastDigests(pasts, inUse)
	return manifestDigests(func(digest string) ([]byte, error) {
		if p.manifest != nil && digest == digestOf(p.manifest) {
			return p.manifest, nil // not stored yet
		}
		return s.Blob(digest)
	}, pasts, inUse)
}
