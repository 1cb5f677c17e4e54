package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// An agent killed mid-run in a directory store is exported, imported into
// PostgreSQL, and resumed in both stores: the two resumes do the same
// (the same events, in an order that differs only where calls ran at
// once) and end with the same conversation.
func TestExportImportResumesAlike(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	bin := cairnBinary(t)
	agent := crashAgent(t)
	cache := cacheForTests(t)
	store := t.TempDir()
	killAfterRound(t, exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "mover", "-f", agent), 3)

	file := filepath.Join(t.TempDir(), "mover.cairn")
	if code, out, errOut := cairn(t, "export", "--store", store, "-o", file, "mover"); code != exitDone {
		t.Fatalf("export: exit %d: %s%s", code, out, errOut)
	}
	if code, out, errOut := cairn(t, "import", "--store", url, file); code != exitDone || !strings.Contains(out, "imported agent mover") {
		t.Fatalf("import: exit %d: %s%s", code, out, errOut)
	}
	if code, _, errOut := cairn(t, "import", "--store", url, file); code != exitUsage || !strings.Contains(errOut, "already exists") {
		t.Fatalf("second import: exit %d: %s", code, errOut)
	}
	here := resumeEvents(t, bin, store, cache)
	there := resumeEvents(t, bin, url, cache)
	if last := here[len(here)-1]; last != "run_end 9 done" {
		t.Fatalf("the resume ended %q", last)
	}
	sort.Strings(here)
	sort.Strings(there)
	if !reflect.DeepEqual(here, there) {
		t.Fatalf("the resumes differ:\nfile store: %v\npostgres:   %v", here, there)
	}
	fs, err := checkpoint.OpenFileStore(store)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	a, err := fs.Read("mover")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ps.Read("mover")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.State.Messages, b.State.Messages) || a.State.Round != b.State.Round || a.State.ToolCalls != b.State.ToolCalls {
		t.Fatalf("the conversations differ: %d and %d messages, round %d and %d", len(a.State.Messages), len(b.State.Messages), a.State.Round, b.State.Round)
	}
}

// killAfterRound starts cmd and kills it with SIGKILL once it reports
// round n committed.
func killAfterRound(t *testing.T, cmd *exec.Cmd, n int) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var e jsonEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "checkpoint_saved" && e.Round == n {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

// resumeEvents resumes the agent "mover" and returns what it did, one
// line per event, without times.
func resumeEvents(t *testing.T, bin, store, cache string) []string {
	t.Helper()
	cmd := exec.Command(bin, "resume", "--store", store, "--cache", cache, "--json", "mover")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("resume on %s: %v\n%s", store, err, out)
	}
	var lines []string
	for _, e := range events(out) {
		line := e.Type + " " + itoa(e.Round)
		if e.Call != nil {
			line += " " + e.Call.ID
		}
		if e.Status != "" {
			line += " " + e.Status
		}
		for _, s := range e.Sealed {
			line += " sealed:" + s.Call
		}
		for _, f := range e.Finished {
			line += " kept:" + f
		}
		lines = append(lines, line)
	}
	return lines
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Export takes no lock; of an agent another process runs it says so, as
// the copy would run apart from that run if resumed before it stops.
func TestExportOfARunningAgentWarns(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "live"}, args...)...); code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	file := filepath.Join(t.TempDir(), "live.cairn")
	if code, _, errOut := cairn(t, "export", "--store", store, "-o", file, "live"); code != exitDone || errOut != "" {
		t.Fatalf("export of an agent no one runs: exit %d, %q", code, errOut)
	}
	s, err := checkpoint.OpenFileStore(store)
	must(t, err)
	lock, err := s.Lock("live", checkpoint.ThisProcess("run-elsewhere"))
	must(t, err)
	defer lock.Unlock()
	code, _, errOut := cairn(t, "export", "--store", store, "-o", file, "live")
	if code != exitDone || !strings.Contains(errOut, "agent live is running in another process") {
		t.Fatalf("export of a running agent: exit %d, %q", code, errOut)
	}
}
