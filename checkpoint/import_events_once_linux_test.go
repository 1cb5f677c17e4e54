package checkpoint

import (
	"bytes"
	"fmt"
	"syscall"
	"testing"
)

// Regression: an import whose write of an agent's event history failed
// partway (here the kernel's limit on a file's size refuses the rest of
// the write, as a full disk does) removed the agent's state but left the
// lines it had written, and the import run again appended the whole
// history after them: the first lines twice, one of them cut short. An
// import run again after a failed one leaves each event once.
func TestImportRetriedAfterItsEventsFailedPartwayHasEachEventOnce(t *testing.T) {
	src, _ := exportable(t)
	a, err := ReadArchive(bytes.NewReader(exportBytes(t, src)))
	must(t, err)
	var events bytes.Buffer
	for i := range 4000 {
		fmt.Fprintf(&events, "{\"type\":\"run_start\",\"n\":%d}\n", i)
	}
	a.Events = events.Bytes()
	dst, err := OpenFileStore(t.TempDir())
	must(t, err)

	var old syscall.Rlimit
	must(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old))
	limit := old
	limit.Cur = 64 << 10 // the state, journal and blobs are smaller; the history is not
	must(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit))
	err = Import(dst, a, ThisProcess("import"))
	must(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old))
	if err == nil {
		t.Fatal("an import whose event history could not be written whole succeeded")
	}
	if dst.Exists("a1") {
		t.Fatalf("the failed import (%v) left agent a1 behind", err)
	}

	must(t, Import(dst, a, ThisProcess("import")))
	if got := eventsOf(t, dst, "a1"); !bytes.Equal(got, a.Events) {
		t.Fatalf("the event history after the import run again: %d bytes, want the archive's %d (%d lines, want %d)",
			len(got), len(a.Events), bytes.Count(got, []byte("\n")), bytes.Count(a.Events, []byte("\n")))
	}
}
