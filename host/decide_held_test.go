package host

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a decision on a call that awaits none, made while a process
// held the agent, waited for the lock and then said that the run asks
// again for each call that awaits a decision, as if the call were one; it
// now says that the call awaits none, naming those that do. A call that
// awaits one still gets the lock's error.
func TestDecisionOnACallNotAwaitingWhileHeldSaysSo(t *testing.T) {
	eng, store := fileEngine(t)
	if _, res, _ := approvalRun(t, eng, RunOptions{}); res.AwaitingCall() != "call_1_0" {
		t.Fatalf("run: %s (%s), want awaiting approval of call_1_0", res.Status, res.Reason)
	}
	lock, err := store.Lock("ap", checkpoint.ThisProcess("run"))
	must(t, err)
	defer lock.Unlock()

	err = eng.Decide(t.Context(), "ap", "call_9_0", Decision{Approved: true})
	if !errors.Is(err, ErrNotAwaiting) || errors.Is(err, checkpoint.ErrLocked) || !strings.Contains(err.Error(), "call_1_0 (write_file)") {
		t.Fatalf("a decision on a call awaiting none while the agent is held: %v", err)
	}
	err = eng.Decide(t.Context(), "ap", "call_1_0", Decision{Approved: true})
	if !errors.Is(err, checkpoint.ErrLocked) {
		t.Fatalf("a decision on the call awaiting one while the agent is held: %v, want the lock's error", err)
	}
}
