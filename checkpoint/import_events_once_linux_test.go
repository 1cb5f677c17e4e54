package checkpoint

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// importChildEnv, set to a directory, makes the test below the process
// that imports the archive in it under a limit on a file's size: the limit
// is the whole process's, so the test's own process must not take it (its
// other tests' files, and the test log, would meet it too).
const importChildEnv = "CAIRN_IMPORT_FSIZE_CHILD"

// Regression: an import whose write of an agent's event history failed
// partway (here the kernel's limit on a file's size refuses the rest of
// the write, as a full disk does) removed the agent's state but left the
// lines it had written, and the import run again appended the whole
// history after them: the first lines twice, one of them cut short. An
// import run again after a failed one leaves each event once.
func TestImportRetriedAfterItsEventsFailedPartwayHasEachEventOnce(t *testing.T) {
	if dir := os.Getenv(importChildEnv); dir != "" {
		importUnderSizeLimit(t, dir)
		return
	}
	src, _ := exportable(t)
	a, err := ReadArchive(bytes.NewReader(exportBytes(t, src)))
	must(t, err)
	var events bytes.Buffer
	for i := range 4000 {
		fmt.Fprintf(&events, "{\"type\":\"run_start\",\"n\":%d}\n", i)
	}
	a.Events = events.Bytes()
	dir := t.TempDir()
	var archive bytes.Buffer
	_, err = a.WriteTo(&archive)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "archive"), archive.Bytes(), 0o644))
	dst, err := OpenFileStore(filepath.Join(dir, "store"))
	must(t, err)

	child := exec.Command(os.Args[0], "-test.run=^TestImportRetriedAfterItsEventsFailedPartwayHasEachEventOnce$")
	child.Env = append(os.Environ(), importChildEnv+"="+dir)
	out, err := child.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("import failed:")) {
		t.Fatalf("the import under a limit on a file's size: %v\n%s", err, out)
	}
	if dst.Exists("a1") {
		t.Fatalf("the failed import (%s) left agent a1 behind", out)
	}

	must(t, Import(dst, a, ThisProcess("import")))
	if got := eventsOf(t, dst, "a1"); !bytes.Equal(got, a.Events) {
		t.Fatalf("the event history after the import run again: %d bytes, want the archive's %d (%d lines, want %d)",
			len(got), len(a.Events), bytes.Count(got, []byte("\n")), bytes.Count(a.Events, []byte("\n")))
	}
}

// importUnderSizeLimit imports the archive in dir into the store there,
// no file growing past 64 KiB, and says whether the import failed.
func importUnderSizeLimit(t *testing.T, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "archive"))
	must(t, err)
	a, err := ReadArchive(bytes.NewReader(b))
	must(t, err)
	dst, err := OpenFileStore(filepath.Join(dir, "store"))
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
	fmt.Printf("import failed: %v\n", err)
}
