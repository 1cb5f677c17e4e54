package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// hugeTurn is a round's records whose turn alone encodes past
// maxRecordSize when over is true, and to half of it when not.
func hugeTurn(round int, over bool) []Record {
	recs := roundRecords(round)
	n := maxRecordSize / 2
	if over {
		n = maxRecordSize
	}
	recs[0].Message.Text = strings.Repeat("x", n)
	return recs
}

// Regression: the writers wrote a frame of any size, and the reader
// refuses one past maxRecordSize: a record or state past it made the agent
// corrupt for every command after. Appending such a record, committing it
// or writing such a state as a snapshot fails with ErrRecordTooLarge and
// leaves the store as it was; the agent goes on.
func TestFramePastReaderLimitIsNotWritten(t *testing.T) {
	fileStore := func(opts ...FileStoreOption) func(t *testing.T) (Store, string) {
		return func(t *testing.T) (Store, string) {
			dir := t.TempDir()
			s, err := OpenFileStore(dir, opts...)
			must(t, err)
			return s, dir
		}
	}
	for name, open := range map[string]func(t *testing.T) (Store, string){
		"file":         fileStore(),
		"group commit": fileStore(WithGroupCommit()),
		"mem":          func(*testing.T) (Store, string) { return NewMemStore(), "" },
	} {
		t.Run(name, func(t *testing.T) {
			s, dir := open(t)
			log := newAgent(t, s, "a1", 1)
			defer log.Close()
			files := func() map[string]string {
				if dir == "" {
					return map[string]string{}
				}
				return agentFiles(t, filepath.Join(dir, "agents", "a1"))
			}
			before := files()
			if err := log.Append(hugeTurn(2, true)...); !errors.Is(err, ErrRecordTooLarge) {
				t.Fatalf("append: %v, want ErrRecordTooLarge", err)
			}
			recs := append(hugeTurn(2, true), Record{Type: RecCommit, Time: t0, Round: 2})
			if _, err := log.Commit(recs...); !errors.Is(err, ErrRecordTooLarge) {
				t.Fatalf("commit: %v, want ErrRecordTooLarge", err)
			}
			sameFiles(t, "a refused record", before, files())
			commitRound(t, log, 2)
			rec, err := s.Read("a1")
			if err != nil || rec.State.Round != 2 || len(rec.State.Messages) != 5 {
				t.Fatalf("read after: %v %+v", err, rec)
			}

			st := NewState("big", Definition{Workspace: "/ws"}, Labels{}, t0)
			st.Messages = []conversation.Message{{Role: conversation.RoleUser, Text: strings.Repeat("x", maxRecordSize)}}
			lock, err := s.Lock("big", ThisProcess("run-1"))
			must(t, err)
			defer lock.Unlock()
			if _, err := s.Create("big", st); !errors.Is(err, ErrRecordTooLarge) || !strings.Contains(err.Error(), "nothing of it was written") {
				t.Fatalf("create: %v, want ErrRecordTooLarge", err)
			}
			if s.Exists("big") {
				t.Fatal("an agent whose state was refused exists")
			}
		})
	}
}

// A file store's journal compacts into a snapshot at a commit; a state
// grown past maxRecordSize is not written as one, and the agent still
// reads, from the snapshot it had and its journal.
func TestSnapshotPastReaderLimitIsNotWritten(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	log := newAgent(t, s, "a1", 1)
	defer log.Close()
	var compactErr error
	for r := 2; r <= 4; r++ {
		must(t, log.Append(hugeTurn(r, false)...))
		if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: r}); err != nil {
			compactErr = err
		}
	}
	other, err := OpenFileStore(dir)
	must(t, err)
	rec, err := other.Read("a1")
	if err != nil || rec.State.Round != 4 {
		t.Fatalf("read: %v", err)
	}
	if !errors.Is(compactErr, ErrRecordTooLarge) {
		t.Fatalf("commits: %v, want ErrRecordTooLarge from compacting", compactErr)
	}
}

// Regression: Blob read whatever was in a blob's place: a FIFO blocked it
// for ever. Something other than a regular file is refused as damage,
// unread, saying what to do.
func TestBlobRefusesNonRegularFile(t *testing.T) {
	for name, plant := range map[string]func(string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"directory": func(p string) error { return os.Mkdir(p, 0o700) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := OpenFileStore(dir)
			must(t, err)
			d, err := s.PutBlob([]byte("response body"))
			must(t, err)
			path := filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(d, "sha256:"))
			must(t, os.Remove(path))
			must(t, plant(path))
			done := make(chan error, 1)
			go func() { _, err := s.Blob(d); done <- err }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Blob did not return")
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), "remove it") {
				t.Fatalf("got %v", err)
			}
		})
	}
}
