package checkpoint

import (
	"bytes"
	"strings"
	"testing"
)

// A damaged export file was refused as "export is corrupt at offset 0: …;
// restore the file from a backup or move the agent aside": an offset the
// reader never knew, and advice for an agent in a store, not for a file
// to import. It now says what is wrong with the file, that nothing was
// imported, and to export the agent again or copy the file again.
func TestReadArchiveDamageSaysWhatToDo(t *testing.T) {
	src, _ := exportable(t)
	good := exportBytes(t, src)
	for _, tc := range []struct {
		name string
		data []byte
		says string
	}{
		{"cut short", good[:len(good)/2], "ends early, as a file cut short does"},
		{"not an export", []byte("{\"agent\":1}"), "not a cairn export"},
		{"junk after", append(append([]byte(nil), good...), 0xff), "export"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadArchive(bytes.NewReader(tc.data))
			if err == nil {
				t.Fatal("taken")
			}
			msg := err.Error()
			for _, want := range []string{tc.says, "nothing was imported", "export the agent again"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%q lacks %q", msg, want)
				}
			}
			for _, not := range []string{"offset 0", "move the agent aside"} {
				if strings.Contains(msg, not) {
					t.Errorf("%q says %q", msg, not)
				}
			}
		})
	}
}
