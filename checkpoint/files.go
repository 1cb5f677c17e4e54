package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

func snapName(round int) string    { return fmt.Sprintf("snap-%016x.cbor", round) }
func journalName(round int) string { return fmt.Sprintf("journal-%016x.log", round) }

// listRounds returns the rounds of the files named prefix<round>suffix in
// dir, ascending. Temp files and other names are ignored.
func listRounds(dir, prefix, suffix string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var rounds []int
	for _, e := range entries {
		if r, ok := roundOf(e.Name(), prefix, suffix); ok {
			rounds = append(rounds, r)
		}
	}
	sort.Ints(rounds)
	return rounds, nil
}

// roundOf is the round a file name of prefix, a hex round and suffix
// names.
func roundOf(name, prefix, suffix string) (int, bool) {
	hexRound, ok := strings.CutPrefix(name, prefix)
	if !ok || !strings.HasSuffix(hexRound, suffix) {
		return 0, false
	}
	r, err := strconv.ParseInt(strings.TrimSuffix(hexRound, suffix), 16, 64)
	return int(r), err == nil && r >= 0
}

// writeAtomic replaces path with data: a temp file beside it, fsync,
// rename, fsync of the directory.
func writeAtomic(path string, data []byte) error {
	if err := replaceSynced(path, data); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// replaceSynced is writeAtomic but for the sync of the directory: the
// content is durable before the name is, and the name is not durable yet.
func replaceSynced(path string, data []byte) error {
	// A temp name of its own, so that two writers of one path (two agents
	// storing the same module at once) never rename each other's file.
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	syncpoint.Synced(tmp)
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// syncDir makes the names in dir durable. Its error names the directory
// and the step.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	if err := errors.Join(d.Sync(), d.Close()); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	syncpoint.Synced(dir)
	return nil
}

// headerFrame is the frame every journal and snapshot starts with.
func headerFrame(b []byte, agent string, round int) []byte {
	payload, _ := encodeRecord(Record{Type: RecHeader, Header: &Header{Schema: schemaPlain, Agent: agent, Round: round}})
	return appendFrame(b, RecHeader, payload)
}

// writeSnapshot writes st as the snapshot of its round, and returns the
// file's bytes.
func writeSnapshot(dir string, st *State) ([]byte, error) {
	data, err := writeSnapshotUnnamed(dir, st)
	if err != nil {
		return nil, err
	}
	if err := syncDir(dir); err != nil {
		return nil, fmt.Errorf("write snapshot %s: %w", snapName(st.Round), err)
	}
	return data, nil
}

// writeSnapshotUnnamed is writeSnapshot but for the sync of dir: the
// snapshot is whole on the disk, its name not durable yet.
func writeSnapshotUnnamed(dir string, st *State) ([]byte, error) {
	payload, err := encodeState(st)
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	data := appendFrame(headerFrame(nil, st.Agent, st.Round), RecState, payload)
	if err := replaceSynced(filepath.Join(dir, snapName(st.Round)), data); err != nil {
		return nil, fmt.Errorf("write snapshot %s: %w", snapName(st.Round), err)
	}
	return data, nil
}

// checkHeader reads a file's header frame and refuses a newer schema.
func checkHeader(name string, fr []frame) (Header, error) {
	if len(fr) == 0 || fr[0].typ != RecHeader {
		return Header{}, &CorruptError{File: name, Reason: "no header frame"}
	}
	rec, err := decodeRecord(RecHeader, fr[0].payload)
	if err != nil {
		return Header{}, &CorruptError{File: name, Reason: "header: " + err.Error()}
	}
	if rec.Header.Schema > schemaVersion {
		return Header{}, &FutureSchemaError{File: name, Version: rec.Header.Schema, Supported: schemaVersion}
	}
	return *rec.Header, nil
}

// readSnapshot reads the snapshot of a round.
func readSnapshot(dir string, round int) (*State, int64, error) {
	name := filepath.Join(dir, snapName(round))
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, 0, err
	}
	fr, end, err := frames(name, data)
	if err != nil {
		return nil, 0, err
	}
	if _, err := checkHeader(name, fr); err != nil {
		return nil, 0, err
	}
	if len(fr) != 2 || fr[1].typ != RecState || end != int64(len(data)) {
		return nil, 0, &CorruptError{File: name, Offset: end, Reason: "a snapshot is a header and one state"}
	}
	st, err := decodeState(fr[1].payload)
	if err != nil {
		return nil, 0, &CorruptError{File: name, Offset: fr[1].off, Reason: "state: " + err.Error()}
	}
	if st.Schema > schemaVersion {
		return nil, 0, &FutureSchemaError{File: name, Version: st.Schema, Supported: schemaVersion}
	}
	if testHookSnapshotRead != nil {
		testHookSnapshotRead()
	}
	return st, int64(len(data)), nil
}

// testHookSnapshotRead, when a test sets it, runs after a snapshot is read
// and before its journal is: where a writer's compaction can overtake a
// reader.
var testHookSnapshotRead func()

// recoverDir reads an agent's newest snapshot and replays its journal, of
// which mark (if marked) says how much was durable. It returns the round
// of the snapshot too.
func recoverDir(agent, dir string, mark commitMark, marked bool) (*Recovered, int, error) {
	snaps, err := listRounds(dir, "snap-", ".cbor")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("read agent %q: %w", agent, err)
	}
	if len(snaps) == 0 {
		return nil, 0, noSnapshot(agent, dir, mark, marked)
	}
	base := snaps[len(snaps)-1]
	st, snapBytes, err := readSnapshot(dir, base)
	if err != nil {
		return nil, 0, fmt.Errorf("read snapshot of agent %q: %w", agent, err)
	}
	rec, err := replayJournal(dir, base, st, mark.durable(base, marked))
	if err != nil {
		return nil, 0, fmt.Errorf("read journal of agent %q: %w", agent, err)
	}
	rec.SnapshotBytes = snapBytes
	return rec, base, nil
}

// noSnapshot is the error for an agent directory with no snapshot:
// ErrNotFound, unless the agent's commit mark says a snapshot was durable,
// or a journal is there, which follows a snapshot that was: then the agent
// is missing committed data. (Remove takes the mark away first and the
// journals before the snapshots, so what an interrupted Remove leaves is
// not found.)
func noSnapshot(agent, dir string, mark commitMark, marked bool) error {
	if marked {
		return &lostError{Agent: agent, Missing: fmt.Sprintf("snapshot %s is missing", snapName(mark.base)), Round: -1, Committed: mark.round}
	}
	if journals, _ := listRounds(dir, "journal-", ".log"); len(journals) > 0 {
		r := journals[len(journals)-1]
		return &lostError{Agent: agent, Round: -1, Committed: r,
			Missing: fmt.Sprintf("snapshot %s is missing (its journal %s is there)", snapName(r), journalName(r))}
	}
	return fmt.Errorf("agent %q: %w", agent, ErrNotFound)
}

// replayJournal applies the journal that follows the snapshot of round base,
// whose first durable bytes are known to be durable. A journal that does
// not exist yet is empty.
func replayJournal(dir string, base int, st *State, durable int64) (*Recovered, error) {
	name := filepath.Join(dir, journalName(base))
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return &Recovered{State: st}, nil
	}
	if err != nil {
		return nil, err
	}
	return replayData(name, data, st, durable)
}
