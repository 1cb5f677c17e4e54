package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// markName is the file, beside an agent's snapshots, that says the least
// its snapshots and journal must hold: its commit mark.
const markName = "committed"

// recMark is the type of the commit mark's one frame.
const recMark RecordType = 0x50

// markVersion is the version of the commit mark's payload.
const markVersion = 1

// commitMark is what an agent's files held at its last durable point: the
// round of the snapshot its journal follows, the round of its boundary, and
// the journal's length. It is written after the journal is durable and is
// not synced itself, so what a crash leaves of it is never more than the
// files hold: a lower bound. A mark that cannot be read claims nothing.
type commitMark struct {
	base, round int
	journal     int64
}

// frame is the mark as its file holds it: one frame, in the frame layout
// of the package doc, whose payload is uvarints: version, base, round and
// journal length.
func (m commitMark) frame() []byte {
	p := make([]byte, 0, 32)
	p = binary.AppendUvarint(p, markVersion)
	p = binary.AppendUvarint(p, uint64(m.base))
	p = binary.AppendUvarint(p, uint64(m.round))
	p = binary.AppendUvarint(p, uint64(m.journal))
	return appendFrame(nil, recMark, p)
}

// decodeMark reads a mark file's bytes. ok is false for anything but a
// valid mark of a version this build reads (a mark of a newer version
// claims nothing to this build; the state it guards refuses it anyway).
func decodeMark(data []byte) (m commitMark, ok bool) {
	if len(data) == 0 {
		return m, false
	}
	f, _, why := readFrame(data, 0)
	if why != "" || f.typ != recMark {
		return m, false
	}
	var v [4]uint64
	b := f.payload
	for i := range v {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > 1<<62 {
			return m, false
		}
		v[i], b = n, b[k:]
	}
	if v[0] != markVersion {
		return m, false
	}
	return commitMark{base: int(v[1]), round: int(v[2]), journal: int64(v[3])}, true
}

// readMark reads an agent's commit mark; ok is false when there is none.
func readMark(dir string) (commitMark, bool) {
	return decodeMark(readMarkBytes(dir))
}

// readMarkBytes reads an agent's commit mark as its file holds it: nil
// when there is none.
func readMarkBytes(dir string) []byte {
	data, _ := os.ReadFile(filepath.Join(dir, markName))
	return data
}

// openMark opens an agent's commit mark for writing, making it if need be.
func openMark(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, markName), os.O_RDWR|os.O_CREATE, 0o600)
}

// durable is how many bytes of the journal that follows the snapshot of
// round base the mark, if marked, says were durable.
func (m commitMark) durable(base int, marked bool) int64 {
	if !marked || m.base != base {
		return 0
	}
	return m.journal
}

// ErrLost: an agent whose files hold less than was committed (a journal
// cut short, a snapshot gone); nothing is loaded and no file is changed.
var ErrLost = errors.New("committed data is missing")

// lostError refuses an agent whose files hold less than was committed: a
// journal cut short below what was durable, or a snapshot that is gone.
// Loading what is left would run committed rounds again over a workspace
// that already has their changes, so nothing is loaded and no file is
// changed.
type lostError struct {
	Agent string
	// Missing names what is gone.
	Missing string
	// Round is the boundary the files still hold, -1 for none; Committed
	// the least round that was committed.
	Round, Committed int
}

func (e *lostError) Error() string {
	held := fmt.Sprintf("its files hold round %d; at least round %d was committed", e.Round, e.Committed)
	switch {
	case e.Round < 0:
		held = fmt.Sprintf("its files hold no snapshot; at least round %d was committed", e.Committed)
	case e.Round >= e.Committed:
		// The rounds are there, but not all that was durable after them
		// (records of the round that was interrupted).
		held = fmt.Sprintf("its files hold round %d, but less of its journal than was durable", e.Round)
	}
	return fmt.Sprintf("agent %q has lost committed data: %s (%s); "+
		"nothing was loaded or changed, and resuming cannot repair it: restore the agent's directory from a backup, "+
		"fork a bookmark of it (`cairn fork`), or start it over with `cairn run --fresh`",
		e.Agent, e.Missing, held)
}

// Is makes errors.Is(err, ErrLost) hold.
func (e *lostError) Is(target error) bool { return target == ErrLost }

// checkLost refuses rec, recovered from the snapshot of round base in dir,
// when it holds less than mark (read before the files were) says was
// durable, or when a journal follows a snapshot that is gone.
func checkLost(agent, dir string, base int, rec *Recovered, mark commitMark, marked bool) error {
	lost := func(missing string) error {
		return &lostError{Agent: agent, Missing: missing, Round: rec.State.Round, Committed: max(mark.round, rec.State.Round)}
	}
	if r, ok := orphanJournal(dir, base); ok {
		return lost(fmt.Sprintf("snapshot %s is missing (its journal %s is there)", snapName(r), journalName(r)))
	}
	switch {
	case !marked:
		return nil
	case mark.base > base:
		return lost(fmt.Sprintf("snapshot %s is missing", snapName(mark.base)))
	case mark.base == base && rec.JournalBytes < mark.journal && rec.JournalBytes == 0:
		if _, err := os.Stat(filepath.Join(dir, journalName(base))); err == nil {
			// There, but cut short of its header: nothing of it reads.
			return lost(fmt.Sprintf("journal %s is empty or shorter than its header, but its first %d bytes were durable", journalName(base), mark.journal))
		}
		return lost(fmt.Sprintf("journal %s is missing", journalName(base)))
	case mark.base == base && rec.JournalBytes < mark.journal:
		if st, err := os.Stat(filepath.Join(dir, journalName(base))); err == nil && st.Size() >= mark.journal {
			// Long enough, but a record below the mark does not read:
			// damaged where it was durable, not cut short.
			return lost(fmt.Sprintf("journal %s is damaged at byte %d: the record there does not read, though its first %d bytes were durable", journalName(base), rec.JournalBytes, mark.journal))
		}
		return lost(fmt.Sprintf("journal %s ends at byte %d, but its first %d bytes were durable", journalName(base), rec.JournalBytes, mark.journal))
	case rec.State.Round < mark.round:
		return lost(fmt.Sprintf("rounds %d to %d are missing", rec.State.Round+1, mark.round))
	}
	return nil
}

// orphanJournal finds a journal newer than the snapshot of round base
// whose own snapshot is not there. A snapshot that is there now was made
// by a compaction since the caller listed the snapshots: no loss.
func orphanJournal(dir string, base int) (int, bool) {
	journals, _ := listRounds(dir, "journal-", ".log")
	if len(journals) == 0 || journals[len(journals)-1] <= base {
		return 0, false
	}
	r := journals[len(journals)-1]
	_, err := os.Stat(filepath.Join(dir, snapName(r)))
	return r, errors.Is(err, fs.ErrNotExist)
}

// writeMark records what the journal holds now, as durable. A mark that
// cannot be written is left as it was: it stays a lower bound.
func (l *journalLog) writeMark() {
	if l.markFile == nil {
		return
	}
	m := commitMark{base: l.base, round: l.replay.st.Round, journal: l.size}
	l.markFile.WriteAt(m.frame(), 0)
}
