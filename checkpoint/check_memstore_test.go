package checkpoint

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// StateRound reads the round of a state as encoded, from its first bytes,
// and nothing from bytes that are not the start of a state this build
// reads.
func TestStateRoundReadsTheHeadOfAState(t *testing.T) {
	for _, tc := range []struct {
		agent  string
		round  int
		schema int
	}{
		{"a", 0, schemaVersion},
		{"agent-with-a-long-id." + strings.Repeat("x", 100), 70_000, schemaVersion},
		{"b", 23, 1},
		{"c", 24, schemaVersion},
	} {
		st := NewState(tc.agent, Definition{Workspace: "/ws"}, Labels{}, time.Now())
		st.Round, st.Schema = tc.round, tc.schema
		b, err := encodeState(st)
		must(t, err)
		if got, ok := StateRound(b[:min(len(b), 200)]); !ok || got != tc.round {
			t.Errorf("round %d of %q: %d, %t", tc.round, tc.agent, got, ok)
		}
		st.Schema = schemaVersion + 1
		if b, err = encodeState(st); err != nil {
			t.Fatal(err)
		}
		if _, ok := StateRound(b); ok {
			t.Errorf("a state of a newer schema read as one this build reads")
		}
	}
	for _, b := range [][]byte{nil, {0xa0}, {0xbf, 0x01, 0x02}, {0xa3, 0x01, 0x02, 0x02, 0x78}, []byte("not cbor")} {
		if _, ok := StateRound(b); ok {
			t.Errorf("StateRound(%x) = ok", b)
		}
	}
}

// The memory store's Check finds a readable agent readable, and returns
// Read's error for one Read refuses.
func TestMemStoreCheck(t *testing.T) {
	s := NewMemStore()
	lock, err := s.Lock("x", ThisProcess("test"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("x", NewState("x", Definition{Workspace: "/ws"}, Labels{}, time.Now()))
	must(t, err)
	for round := 1; round <= 3; round++ {
		if _, err := log.Commit(Record{Type: RecCommit, Round: round}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Check("x"); err != nil {
		t.Fatalf("Check of a readable agent: %v", err)
	}
	if err := s.Check("y"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Check of no agent: %v", err)
	}
	if _, err := log.Commit(Record{Type: RecCommit, Round: 9}); err == nil {
		t.Fatal("a commit out of order was taken")
	}
	_, want := s.Read("x")
	if err := s.Check("x"); want == nil || err == nil || err.Error() != want.Error() {
		t.Fatalf("Check of an agent Read refuses: %v; want Read's %v", err, want)
	}
}
