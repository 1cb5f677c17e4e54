package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// --store with a postgres:// URL keeps agents in PostgreSQL: run, ls,
// events and gc work on it as on a directory.
func TestPostgresStore(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	flags := exampleAgent(t)
	flags[len(flags)-3] = url
	code, _, errOut := cairn(t, append([]string{"run", "--id", "pg1"}, flags...)...)
	if code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	code, out, errOut := cairn(t, "ls", "--store", url)
	if code != exitDone || !strings.Contains(out, "pg1") || !strings.Contains(out, "done") {
		t.Fatalf("ls: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = cairn(t, "events", "--store", url, "pg1")
	if code != exitDone || !strings.Contains(out, "pg1") {
		t.Fatalf("events: exit %d:\n%s%s", code, out, errOut)
	}
	if code, out, errOut = cairn(t, "gc", "--store", url, "--dry-run"); code != exitDone {
		t.Fatalf("gc: exit %d:\n%s%s", code, out, errOut)
	}
}

// An agent whose lease another process holds is refused with exit 5,
// naming the holder, as with the file store's lock.
func TestPostgresLeaseHeldIsExit5(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	flags := exampleAgent(t)
	flags[len(flags)-3] = url
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "pg1"}, flags...)...); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	s, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := checkpoint.Holder{PID: 4242, Host: "node-b", Run: "run-on-b", Started: time.Now()}
	lock, err := s.Lock("pg1", h)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	code, _, errOut := cairn(t, "resume", "--store", url, "--cache", cacheForTests(t), "pg1")
	if code != exitLocked || !strings.Contains(errOut, "node-b") || !strings.Contains(errOut, "run-on-b") ||
		!strings.Contains(errOut, "lease expires") || !strings.Contains(errOut, "--steal") {
		t.Fatalf("resume of a leased agent: exit %d: %s", code, errOut)
	}
}

// A real cairn process on PostgreSQL is killed with SIGKILL at a random
// moment; another process resumes it at once (the holder is gone) and
// ends where an uninterrupted run ends, every call's effects once.
func TestPostgresKillDashNineAndResume(t *testing.T) {
	t.Parallel()
	killTrials(t, pgtest.Shared(t).NewDatabase)
}

// A cairn process stopped (SIGSTOP) past its lease, whose agent another
// process took over and finished, is refused when it wakes: its next write
// is fenced, it exits 5 naming the new holder, and nothing it did after
// the take-over reaches the agent.
func TestPostgresStoppedHolderIsFenced(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).NewDatabase(t)
	bin := cairnBinary(t)
	agent := crashAgent(t)
	cache := cacheForTests(t)
	leased := url + "&lease_ttl=500ms"
	s, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// SIGSTOP lands some time after round 2's event is read, and a loaded
	// machine may let the holder finish its rounds first; then there is
	// nothing to fence, and the trial is made again under another id.
	var a *exec.Cmd
	var errA bytes.Buffer
	held := ""
	for attempt := 1; held == "" && attempt <= 5; attempt++ {
		id := fmt.Sprintf("held-%d", attempt)
		errA.Reset()
		a = exec.Command(bin, "run", "--store", leased, "--cache", cache, "--json", "--id", id, "-f", agent)
		a.Stderr = &errA
		stopAfterRound(t, a, 2)
		if waitUnlocked(t, s, id) {
			held = id
			continue
		}
		a.Process.Kill()
		a.Wait()
	}
	if held == "" {
		t.Fatal("the holder finished before it could be stopped, five times")
	}
	b := exec.Command(bin, "resume", "--store", url, "--cache", cache, "--json", held)
	if out, err := b.CombinedOutput(); err != nil {
		t.Fatalf("resume on the other process: %v\n%s", err, out)
	}
	want, err := s.Read(held)
	if err != nil {
		t.Fatal(err)
	}
	if want.State.Round != 9 || want.State.Status != checkpoint.StatusDone {
		t.Fatalf("after the take-over: round %d, %s", want.State.Round, want.State.Status)
	}

	a.Process.Signal(syscall.SIGCONT)
	a.Wait()
	if code := a.ProcessState.ExitCode(); code != exitLocked || !strings.Contains(errA.String(), "taken over") {
		t.Fatalf("the woken holder: exit %d: %s", code, errA.String())
	}
	got, err := s.Read(held)
	if err != nil {
		t.Fatal(err)
	}
	if got.State.Round != 9 || got.State.ToolCalls != want.State.ToolCalls || len(got.State.Messages) != len(want.State.Messages) ||
		len(got.State.Runs) != len(want.State.Runs) || got.State.Status != checkpoint.StatusDone {
		t.Fatalf("the woken holder changed the agent: round %d, %d calls, %d messages, %d runs, %s",
			got.State.Round, got.State.ToolCalls, len(got.State.Messages), len(got.State.Runs), got.State.Status)
	}
}

// waitUnlocked waits until the database's clock passes the stopped
// holder's lease of agent id, and reports whether the agent then waits
// for another process: false if the holder had finished it before it was
// stopped.
func waitUnlocked(t *testing.T, s *pgstore.Store, id string) bool {
	t.Helper()
	for {
		sum, err := s.Summary(id)
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Locked {
			return sum.Status != checkpoint.StatusDone
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopAfterRound starts cmd and stops it with SIGSTOP once it reports
// round n committed, and returns once it is stopped (or has ended); its
// output is drained meanwhile.
func stopAfterRound(t *testing.T, cmd *exec.Cmd, n int) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"checkpoint_saved"`) && strings.Contains(sc.Text(), fmt.Sprintf(`"round":%d,`, n)) {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGSTOP)
	go io.Copy(io.Discard, out)
	waitStopped(t, cmd.Process.Pid)
}

// waitStopped waits until process pid is stopped or has ended, by its
// state in /proc: a signal sent is not yet a signal taken.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return // reaped
		}
		// The state follows the command's name, in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && strings.ContainsRune("TtZX", rune(b[i+2])) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("process %d did not stop", pid)
}

// PostgreSQL restarted while a real cairn run goes on: the run either
// goes through (a write that never reached the server is sent again) or
// stops with "database unavailable"; then cairn resume finishes it, with
// no committed round lost and no call that had started run again.
func TestPostgresRestartDuringRun(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	bin := cairnBinary(t)
	agent := crashAgent(t)
	cache := cacheForTests(t)
	cmd := exec.Command(bin, "run", "--store", url, "--cache", cache, "--json", "--id", "victim", "-f", agent)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen bytes.Buffer
	rest := bufio.NewReader(out)
	readLinesUntil(rest, &seen, func(line []byte) bool { return bytes.Contains(line, []byte(`"checkpoint_saved"`)) })
	srv.Restart(t)
	io.Copy(&seen, rest)
	cmd.Wait()
	switch code := cmd.ProcessState.ExitCode(); {
	case code == exitDone:
		evs := events(seen.Bytes())
		if last := evs[len(evs)-1]; last.Type != "run_end" || last.Round != 9 {
			t.Fatalf("the run went through the restart but ended %+v", last)
		}
		next := 1
		for _, e := range evs {
			if e.Type == "checkpoint_saved" {
				if e.Round != next {
					t.Fatalf("committed round %d, want %d", e.Round, next)
				}
				next++
			}
		}
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rec, err := s.Read("victim")
		if err != nil || rec.State.Round != 9 || rec.State.ToolCalls != 16 || rec.State.Status != checkpoint.StatusDone {
			t.Fatalf("after the run: %+v, %v", rec, err)
		}
		t.Log("the run went through the restart")
	case strings.Contains(stderr.String(), "database unavailable"):
		t.Logf("the run stopped: %s", strings.TrimSpace(stderr.String()))
		resumeKilled(t, bin, url, cache, seen.Bytes())
	default:
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
