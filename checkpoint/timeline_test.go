package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDecodeManifestRefuses(t *testing.T) {
	file := func(p string) WorkspaceEntry { return WorkspaceEntry{Path: p, Digest: "sha256:00", Size: 1} }
	for _, tc := range []struct {
		name    string
		entries []WorkspaceEntry
	}{
		{"absolute", []WorkspaceEntry{file("/etc/passwd")}},
		{"dot-dot", []WorkspaceEntry{file("../x")}},
		{"unclean", []WorkspaceEntry{file("a//b")}},
		{"twice", []WorkspaceEntry{file("a"), file("a")}},
		{"below a file", []WorkspaceEntry{file("a"), file("a/b")}},
		{"file without content", []WorkspaceEntry{{Path: "a"}}},
		{"gone in a manifest", []WorkspaceEntry{{Path: "a", Gone: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := encMode.Marshal(workspaceManifest{Version: 1, Entries: tc.entries})
			if err != nil {
				t.Fatal(err)
			}
			var ce *CorruptError
			if _, err := decodeManifest(data); !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *CorruptError", err)
			}
		})
	}
	data, _ := encMode.Marshal(workspaceManifest{Version: manifestVersion + 1})
	if _, err := decodeManifest(data); !errors.Is(err, ErrFutureSchema) {
		t.Fatalf("newer manifest: got %v", err)
	}
}

func TestApplyChangesRemovesBelowAGoneDirectory(t *testing.T) {
	m := []WorkspaceEntry{{Path: "d", Dir: true}, {Path: "d/e", Dir: true}, {Path: "d/e/f", Digest: "x"}, {Path: "dz", Digest: "y"}}
	got := ApplyChanges(m, []WorkspaceEntry{{Path: "d", Gone: true}, {Path: "n", Digest: "z"}})
	if len(got) != 2 || got[0].Path != "dz" || got[1].Path != "n" || len(m) != 4 {
		t.Fatalf("got %+v (m %d)", got, len(m))
	}
}

// A torn tail of the past file is left out by Pasts and cut away by the
// next PutPast, so what follows it is readable.
func TestPastFileTornTail(t *testing.T) {
	s, err := OpenFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lock, err := s.Lock("a", ThisProcess("r"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	log, err := s.Create("a", NewState("a", Definition{}, Labels{}, time.Unix(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	put := func(round int) {
		t.Helper()
		st := log.State()
		st.Round = round
		p, err := NewPast(st, nil)
		if err == nil {
			err = s.PutPast("a", p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	put(0)
	name := filepath.Join(s.Dir(), "agents", "a", pastFile)
	f, _ := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{40, 0, 0, 0, byte(pastFrame), 1, 2})
	f.Close()
	if pasts, err := s.Pasts("a"); err != nil || len(pasts) != 1 {
		t.Fatalf("pasts with a torn tail: %d, %v", len(pasts), err)
	}
	s.pastsChecked.Delete("a") // as after the lock is taken again, its past file not open
	s.mu.Lock()
	s.closePast(s.held["a"])
	s.mu.Unlock()
	put(1)
	if pasts, err := s.Pasts("a"); err != nil || len(pasts) != 2 || pasts[1].Round != 1 {
		t.Fatalf("pasts after the cut: %d, %v", len(pasts), err)
	}
}

func FuzzDecodeManifest(f *testing.F) {
	good, _ := EncodeManifest([]WorkspaceEntry{{Path: "d", Dir: true}, {Path: "d/a", Digest: "sha256:00", Size: 2, Mode: 0o644}})
	f.Add(good)
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeManifest(data)
		if err != nil {
			return
		}
		if err := checkEntries(m); err != nil {
			t.Fatalf("decoded a manifest that does not check: %v", err)
		}
	})
}

func FuzzDecodePast(f *testing.F) {
	p, _ := NewPast(NewState("a", Definition{}, Labels{}, time.Unix(1, 0)), []WorkspaceEntry{{Path: "x", Gone: true}})
	good, _ := encodePast(p)
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		decodePast("a", data) // must not panic
	})
}

// An export carries the pasts and every blob they name, the files of the
// base manifest too: the imported agent's workspace at any round is the
// original's.
func TestExportCarriesThePasts(t *testing.T) {
	src := NewMemStore()
	lock, _ := src.Lock("a", ThisProcess("r"))
	log, err := src.Create("a", NewState("a", Definition{}, Labels{}, time.Unix(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	one, _ := src.PutBlob([]byte("one"))
	two, _ := src.PutBlob([]byte("two"))
	base, _ := EncodeManifest([]WorkspaceEntry{{Path: "a", Digest: one, Size: 3}})
	baseDigest, _ := src.PutBlob(base)
	p0, _ := NewPast(log.State(), nil)
	p0.Base = baseDigest
	p1, _ := NewPast(log.State(), []WorkspaceEntry{{Path: "a", Digest: two, Size: 3}})
	p1.Round = 1
	for _, p := range []Past{p0, p1} {
		if err := src.PutPast("a", p); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	lock.Unlock()
	a, err := Export(src, "a")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	a.WriteTo(&buf)
	b, err := ReadArchive(&buf)
	if err != nil || b.Version != 2 || len(b.Blobs) != 3 {
		t.Fatalf("read back: %v (version %d, %d blobs)", err, b.Version, len(b.Blobs))
	}
	dst := NewMemStore()
	if err := Import(dst, b, ThisProcess("import")); err != nil {
		t.Fatal(err)
	}
	pasts, _ := dst.Pasts("a")
	for n, want := range []string{one, two} {
		m, err := WorkspaceAt(dst, pasts, "a", n)
		if err != nil || len(m) != 1 || m[0].Digest != want {
			t.Fatalf("imported workspace at round %d: %+v, %v", n, m, err)
		}
	}
	delete(a.Blobs, one)
	buf.Reset()
	a.WriteTo(&buf)
	if _, err := ReadArchive(&buf); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("an export without a base's file: %v", err)
	}
}
