package checkpoint

import (
	"strings"
	"testing"
)

// HasBlob finds what PutBlob stored, and nothing for a digest it did not
// store or one that is not a digest.
func TestFileStoreHasBlob(t *testing.T) {
	s, err := OpenFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.PutBlob([]byte("module"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasBlob(d) {
		t.Fatalf("HasBlob(%s) after PutBlob = false", d)
	}
	for _, digest := range []string{"sha256:" + strings.Repeat("0", 64), "", "sha256:..",
		strings.TrimPrefix(d, "sha256:"), "sha256:" + strings.Repeat("../", 21) + "a"} {
		if s.HasBlob(digest) {
			t.Errorf("HasBlob(%q) = true", digest)
		}
	}
}
