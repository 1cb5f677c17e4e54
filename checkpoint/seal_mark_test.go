package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// A sealed result's mark of unknown effects reaches its tool message when
// the round commits, and stays there through a snapshot; a result without
// the mark is encoded as results were before it existed, so old journals
// read unchanged.
func TestSealMarkOfUnknownEffectsReachesTheToolMessage(t *testing.T) {
	s, err := OpenFileStore(t.TempDir(), WithCompactAfter(1))
	must(t, err)
	lock, err := s.Lock("a", ThisProcess("r"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("a", NewState("a", Definition{}, Labels{}, t0))
	must(t, err)
	turn := &conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{
		{ID: "c1", Name: "http", Input: "{}"}, {ID: "c2", Name: "http", Input: "{}"}}}
	must(t, log.Append(Record{Type: RecTurn, Time: t0, Round: 1, Message: turn},
		Record{Type: RecResult, Time: t0, Round: 1, Call: "c1", Tool: "http",
			Result: &Result{Output: "sealed", IsError: true, Sealed: true, EffectsUnknown: true}},
		Record{Type: RecResult, Time: t0, Round: 1, Call: "c2", Tool: "http",
			Result: &Result{Output: "sealed", IsError: true, Sealed: true}}))
	if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: 1}); err != nil {
		t.Fatal(err)
	}
	must(t, log.Close())
	rec, err := s.Read("a")
	must(t, err)
	if _, err := os.Stat(filepath.Join(s.Dir(), "agents", "a", "snap-0000000000000001.cbor")); err != nil {
		t.Fatalf("the round was not compacted into a snapshot: %v", err)
	}
	if msgs := rec.State.Messages; len(msgs) != 3 || !msgs[1].EffectsUnknown || msgs[2].EffectsUnknown {
		t.Fatalf("tool messages %+v; want the first marked effects unknown, the second not", msgs)
	}
	plain := mustEncode(t, Record{Type: RecResult, Round: 1, Call: "c2", Result: &Result{Output: "sealed", IsError: true, Sealed: true}})
	marked := mustEncode(t, Record{Type: RecResult, Round: 1, Call: "c2", Result: &Result{Output: "sealed", IsError: true, Sealed: true, EffectsUnknown: true}})
	if bytes.Equal(plain, marked) || bytes.Contains(plain, []byte{0x07, 0xf5}) {
		t.Fatalf("an unmarked result carries the mark's key: %x", plain)
	}
}
