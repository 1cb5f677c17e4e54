package overlay

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Unchanged names the paths a call changed back to what they held — a
// file written with its own content, a directory removed and made again
// — and no path whose change stands, nor one that was not there before.
func TestUnchangedNamesThePathsLeftAsTheyWere(t *testing.T) {
	ws := t.TempDir()
	for name, content := range map[string]string{"same.txt": "as it was", "other.txt": "before"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	o, fsys := mounted(t, ws, 1<<20)
	write := func(p, content string) {
		f, e := fsys.OpenFile(p, experimentalsys.O_WRONLY|experimentalsys.O_CREAT|experimentalsys.O_TRUNC, 0o644)
		if e != 0 {
			t.Fatalf("open %s: %v", p, e)
		}
		if _, e := f.Write([]byte(content)); e != 0 {
			t.Fatalf("write %s: %v", p, e)
		}
		f.Close()
	}
	write("same.txt", "as it was")
	write("other.txt", "after!")
	write("new.txt", "made")
	if e := fsys.Unlink("new.txt"); e != 0 {
		t.Fatal(e)
	}
	if e := fsys.Rmdir("dir"); e != 0 {
		t.Fatal(e)
	}
	if e := fsys.Mkdir("dir", 0o755); e != 0 {
		t.Fatal(e)
	}
	got, err := o.Unchanged()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dir", "same.txt"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Unchanged: %v, want %v", got, want)
	}
	effects, err := o.Effects()
	if err != nil || len(effects) != 1 || effects[0].Path != "other.txt" {
		t.Fatalf("Effects: %v, %v; want other.txt's write alone", effects, err)
	}
}
