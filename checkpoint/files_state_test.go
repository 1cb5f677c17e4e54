package checkpoint

import (
	"fmt"
	"testing"
)

// A round's RecFiles record merges into State.Files by path when the
// round commits, survives a reopen, and the pool stays bounded, forgetting
// the oldest rounds first.
func TestFilesMergeAndBound(t *testing.T) {
	s, _ := OpenFileStore(t.TempDir())
	log := newAgent(t, s, "f", 0)
	for r := 1; r <= 3; r++ {
		files := []FileEntry{{Path: fmt.Sprintf("r%d.txt", r), Exists: true, Size: int64(r), Round: r, Op: "write"},
			{Path: "shared.txt", Exists: true, Size: int64(10 * r), Round: r, Call: fmt.Sprintf("call_%d_0", r), Op: "write"}}
		must(t, log.Append(append(roundRecords(r), Record{Type: RecFiles, Time: t0, Round: r, Files: files})...))
		if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: r}); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	rec, err := s.Read("f")
	must(t, err)
	got := rec.State.Files
	if len(got) != 4 || got[0].Path != "r1.txt" || got[3].Path != "shared.txt" || got[3].Size != 30 || got[3].Call != "call_3_0" {
		t.Fatalf("files %+v", got)
	}

	st := NewState("b", Definition{}, Labels{}, t0)
	for r := 0; r < MaxFileEntries+10; r++ {
		st.mergeFiles([]FileEntry{{Path: fmt.Sprintf("%05d", MaxFileEntries+10-r), Round: r + 1, Op: "read"}})
	}
	if len(st.Files) != MaxFileEntries {
		t.Fatalf("%d entries, want %d", len(st.Files), MaxFileEntries)
	}
	for _, f := range st.Files {
		if f.Round <= 10 {
			t.Fatalf("entry of round %d kept while newer were dropped", f.Round)
		}
	}
}
