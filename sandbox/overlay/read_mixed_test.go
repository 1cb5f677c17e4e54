package overlay

import "testing"

// Two passes over a file that end on different contents (it changed
// between them) leave no content the call read whole.
func TestReadWholeOfTwoContentsIsNone(t *testing.T) {
	o := &Overlay{reads: map[string]bool{"a.txt": true}, whole: map[string]wholeRead{}}
	o.readWhole("a.txt", fileVersion([]byte{1}, 1), 0o644)
	if _, _, ok := o.ReadWhole("a.txt"); !ok {
		t.Fatal("one pass: no content")
	}
	o.readWhole("a.txt", fileVersion([]byte{1}, 1), 0o644)
	if _, _, ok := o.ReadWhole("a.txt"); !ok {
		t.Fatal("two passes over one content: no content")
	}
	o.readWhole("a.txt", fileVersion([]byte{2}, 1), 0o644)
	if v, _, ok := o.ReadWhole("a.txt"); ok {
		t.Fatalf("two contents: %v", v)
	}
}
