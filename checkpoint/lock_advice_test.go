package checkpoint

import (
	"os"
	"strings"
	"testing"
)

// Regression: an agent held by `cairn gc` (or undo, fork, snapshot,
// import) was refused with the advice to pause it, which does not stop
// those; the advice is to try again once they are done.
func TestLockedByACommandAdvisesTryingAgain(t *testing.T) {
	dir := t.TempDir() + "/a"
	held, err := lockDir("a", dir, ThisProcess("gc"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	if err := os.WriteFile(dir+"/snap-0000000000000000.cbor", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = lockDir("a", dir, ThisProcess("run-2"))
	if err == nil {
		t.Fatal("the lock gc holds was taken")
	}
	msg := err.Error()
	if strings.Contains(msg, "cairn pause") || !strings.Contains(msg, "try again when it is done") || !strings.Contains(msg, "cairn gc") {
		t.Errorf("an agent gc holds is refused with %q; want the advice to try again once gc is done, not to pause it", msg)
	}
	run := &LockedError{Agent: "a", Holder: ThisProcess("run-1")}
	if !strings.Contains(run.Error(), "cairn pause a") {
		t.Errorf("an agent a run holds is refused with %q; want the advice to pause it", run.Error())
	}
}

// Regression: an agent held by `cairn approve` or `cairn deny`, which
// record a decision under its lock, or by `cairn workflow ls` or `show`
// looking whether a workflow still runs, was refused with the advice to
// pause it, which does not stop them.
func TestLockedByADecisionAdvisesTryingAgain(t *testing.T) {
	for run, says := range map[string]string{"decide": "cairn approve", "workflow status": "cairn workflow ls"} {
		msg := (&LockedError{Agent: "a", Holder: ThisProcess(run)}).Error()
		if strings.Contains(msg, "cairn pause") || !strings.Contains(msg, "try again when it is done") || !strings.Contains(msg, says) {
			t.Errorf("an agent that %q holds is refused with %q; want the advice to try again once %s is done, not to pause it", run, msg, says)
		}
	}
}

// Regression: of two forks (or imports) making the same id, the one that
// found it held was told to try again once the other was done, and trying
// again was refused as the agent existing. It is told that the other is
// making the agent, where to see it, and to give another id.
func TestLockedByAMakerSaysItIsMakingTheAgent(t *testing.T) {
	for _, maker := range []string{"fork", "import"} {
		msg := (&LockedError{Agent: "twin", Holder: ThisProcess(maker)}).Error()
		if strings.Contains(msg, "try again") || !strings.Contains(msg, "it is making the agent (`cairn "+maker+"`)") ||
			!strings.Contains(msg, "`cairn show twin`") || !strings.Contains(msg, "another id") {
			t.Errorf("an agent a %s is making is refused with %q; want that it is being made, where to see it, and to give another id", maker, msg)
		}
	}
}
