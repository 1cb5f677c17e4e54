package storetest

import (
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// A pause request is made without the agent's lock while another holds
// it, is seen by the holder, survives a second request as one, and is
// gone once cleared. An agent with no state cannot be marked. A store
// that keeps no requests (no checkpoint.Pauser) skips this test.
func testPause(t *testing.T, s checkpoint.Store) {
	p, ok := s.(checkpoint.Pauser)
	if !ok {
		t.Skip("the store keeps no pause requests")
	}
	create(t, s, "a1", 1) // its lock stays held: the requester must not need it
	requested(t, p, "a1", false)
	must(t, p.RequestPause("a1"))
	must(t, p.RequestPause("a1"))
	requested(t, p, "a1", true)
	must(t, p.ClearPause("a1"))
	requested(t, p, "a1", false)
	must(t, p.ClearPause("a1"))
	wantErr(t, "RequestPause of an unknown agent", p.RequestPause("nobody"), checkpoint.ErrNotFound)
	requested(t, p, "nobody", false)
	rec, err := s.Read("a1")
	must(t, err)
	if rec.State.Round != 1 {
		t.Fatalf("the requests changed the agent: round %d", rec.State.Round)
	}
}

func requested(t *testing.T, p checkpoint.Pauser, id string, want bool) {
	t.Helper()
	got, err := p.PauseRequested(id)
	must(t, err)
	if got != want {
		t.Fatalf("PauseRequested(%s) = %v, want %v", id, got, want)
	}
}
