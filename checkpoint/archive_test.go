package checkpoint

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// exportable is a file store with an agent that names two blobs, has three
// rounds committed and a fourth interrupted, a bookmark and events.
func exportable(t *testing.T) (*FileStore, *State) {
	s, err := OpenFileStore(t.TempDir())
	must(t, err)
	af, err := s.PutBlob([]byte("name: x\n"))
	must(t, err)
	mod, err := s.PutBlob([]byte("\x00asm module"))
	must(t, err)
	ws, err := s.PutBlob([]byte("workspace archive"))
	must(t, err)
	lock, err := s.Lock("a1", ThisProcess("run-1"))
	must(t, err)
	defer lock.Unlock()
	st := NewState("a1", Definition{AgentFile: af, Modules: map[string]string{"m": mod}, Workspace: "/ws"}, Labels{Tenant: "t"}, t0)
	log, err := s.Create("a1", st)
	must(t, err)
	must(t, log.Append(Record{Type: RecRunStarted, Time: t0, Run: &RunInfo{ID: "run-1", Started: t0}}))
	for r := 1; r <= 3; r++ {
		commitRound(t, log, r)
	}
	must(t, log.Append(roundRecords(4)[:2]...))
	must(t, log.Sync())
	must(t, s.PutBookmark("a1", Bookmark{Label: "b1", Round: 3, Time: t0, State: log.State(), Workspace: ws}))
	w, err := s.Events("a1")
	must(t, err)
	io.WriteString(w, "{\"type\":\"run_start\"}\n")
	w.Close()
	must(t, log.Close())
	return s, log.State()
}

func exportBytes(t *testing.T, s Store) []byte {
	a, err := Export(s, "a1")
	must(t, err)
	var buf bytes.Buffer
	_, err = a.WriteTo(&buf)
	must(t, err)
	return buf.Bytes()
}

// An agent exported from one store and imported into another reads back
// the same: state, interrupted round, bookmarks, events and blobs.
func TestExportImportRoundTrip(t *testing.T) {
	src, _ := exportable(t)
	data := exportBytes(t, src)
	a, err := ReadArchive(bytes.NewReader(data))
	must(t, err)
	dst := NewMemStore()
	must(t, Import(dst, a, ThisProcess("import")))

	want, err := src.Read("a1")
	must(t, err)
	got, err := dst.Read("a1")
	must(t, err)
	g, _ := encodeState(got.State)
	w, _ := encodeState(want.State)
	if !bytes.Equal(g, w) || len(got.Tail) != 2 || got.Tail[1].Phase != PhaseExecuting {
		t.Fatalf("imported state or tail differs: tail %+v", got.Tail)
	}
	for _, d := range []string{want.State.Definition.AgentFile, want.State.Definition.Modules["m"]} {
		if b, err := dst.Blob(d); err != nil || BlobDigest(b) != d {
			t.Fatalf("blob %s: %v", d, err)
		}
	}
	bs, err := dst.Bookmarks("a1")
	must(t, err)
	if len(bs) != 1 || bs[0].Label != "b1" {
		t.Fatalf("bookmarks %+v", bs)
	}
	if _, err := dst.Blob(bs[0].Workspace); err != nil {
		t.Fatalf("the bookmark's workspace: %v", err)
	}
	r, err := dst.ReadEvents("a1")
	must(t, err)
	if ev, _ := io.ReadAll(r); string(ev) != "{\"type\":\"run_start\"}\n" {
		t.Fatalf("events %q", ev)
	}
	// Exported again, it is the same file.
	if again := exportBytes(t, dst); !bytes.Equal(again, data) {
		t.Fatal("an imported agent exports to other bytes")
	}
	// And a second import finds it there.
	if err := Import(dst, a, ThisProcess("import")); !errors.Is(err, ErrExists) {
		t.Fatalf("second import: %v", err)
	}
}

func TestReadArchiveRefusesDamage(t *testing.T) {
	src, _ := exportable(t)
	good := exportBytes(t, src)
	a, err := ReadArchive(bytes.NewReader(good))
	must(t, err)
	reencode := func(change func(a *Archive)) []byte {
		c, _ := ReadArchive(bytes.NewReader(good))
		change(c)
		var buf bytes.Buffer
		c.WriteTo(&buf)
		return buf.Bytes()
	}
	module := a.State.Definition.Modules["m"]
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrCorrupt},
		{"not an export", []byte("{\"agent\":1}"), ErrCorrupt},
		{"truncated", good[:len(good)/2], ErrCorrupt},
		{"junk after", append(append([]byte(nil), good...), 0xff), ErrCorrupt},
		{"newer format", reencode(func(a *Archive) { a.Version = archiveVersion + 1 }), ErrFutureSchema},
		{"newer state", reencode(func(a *Archive) { a.State.Schema = schemaVersion + 1 }), ErrFutureSchema},
		{"blob tampered", reencode(func(a *Archive) { a.Blobs[module] = []byte("other") }), ErrCorrupt},
		{"blob missing", reencode(func(a *Archive) { delete(a.Blobs, module) }), ErrCorrupt},
		{"bad id", reencode(func(a *Archive) { a.Agent, a.State.Agent = "../x", "../x" }), ErrCorrupt},
		{"state of another agent", reencode(func(a *Archive) { a.State.Agent = "other" }), ErrCorrupt},
		{"record out of order", reencode(func(a *Archive) {
			p, _ := encodeRecord(Record{Type: RecCommit, Round: 9})
			a.Tail = append(a.Tail, ArchivedRecord{Type: RecCommit, Payload: p})
		}), ErrCorrupt},
		{"unknown record", reencode(func(a *Archive) { a.Tail[0].Type = 99 }), ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadArchive(bytes.NewReader(tc.data))
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzReadArchive: no input makes ReadArchive panic, and what it accepts
// imports into a store.
func FuzzReadArchive(f *testing.F) {
	s, err := OpenFileStore(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	log := newAgent(f, s, "a1", 2)
	log.Close()
	a, err := Export(s, "a1")
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	a.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(archiveMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadArchive(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := Import(NewMemStore(), a, ThisProcess("fuzz")); err != nil {
			t.Fatalf("an archive that was read did not import: %v", err)
		}
	})
}
