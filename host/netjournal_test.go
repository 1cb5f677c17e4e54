package host

import (
	"context"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// refuser refuses every request at admission.
type refuser struct{ sandbox.Net }

func (refuser) Admit(*sandbox.NetRequest) error { return netguard.ErrRefused }

// A call looping on refused requests journals only the first
// maxJournaledRefusals of them.
func TestNetRefusalsJournaledUpToALimit(t *testing.T) {
	var recs int
	j := &netJournal{inner: refuser{}, write: func(r ...checkpoint.Record) error { recs += len(r); return nil }}
	for range maxJournaledRefusals + 10 {
		if _, err := j.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://x/"}); err == nil {
			t.Fatal("a refused request went through")
		}
	}
	if recs != maxJournaledRefusals || len(j.done) != maxJournaledRefusals {
		t.Fatalf("%d records, %d exchanges kept; want %d", recs, len(j.done), maxJournaledRefusals)
	}
}
