package checkpoint

import (
	"bytes"
	"strings"
	"testing"
)

// Regression: an agent whose export came to more than the 1 GiB that
// ReadArchive reads (a workspace of a file that large, which a store
// keeps) was exported without a word, and its import refused the file as
// damaged, advising to export it again, which made the same file. The
// export is refused instead, before anything is written, saying its size,
// the limit and what to do.
func TestExportLargerThanImportReadsRefused(t *testing.T) {
	s, _ := exportable(t)
	a, err := Export(s, "a1")
	must(t, err)
	a.Blobs[BlobDigest([]byte("big"))] = make([]byte, maxArchiveSize)
	var out bytes.Buffer
	n, err := a.WriteTo(&out)
	if err == nil {
		if _, rerr := ReadArchive(&out); rerr != nil {
			t.Fatalf("an export of %d bytes was written, and its import refuses it: %v", n, rerr)
		}
		t.Fatalf("an export of %d bytes was written", n)
	}
	for _, want := range []string{`agent "a1"`, "1073741824", "nothing was written"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if n != 0 || out.Len() != 0 {
		t.Fatalf("%d bytes written", out.Len())
	}
}
