package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// --store with a postgres:// URL keeps agents in PostgreSQL: run, ls and
// events work on it as on a directory.
func TestPostgresStore(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
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
}

// An agent whose lease another process holds is refused with exit 5,
// naming the holder, as with the file store's lock.
func TestPostgresLeaseHeldIsExit5(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
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
	if code != exitLocked || !strings.Contains(errOut, "node-b") || !strings.Contains(errOut, "run-on-b") {
		t.Fatalf("resume of a leased agent: exit %d: %s", code, errOut)
	}
}

// A real cairn process on PostgreSQL is killed with SIGKILL at a random
// moment; another process resumes it at once (the holder is gone) and
// ends where an uninterrupted run ends, every call's effects once.
func TestPostgresKillDashNineAndResume(t *testing.T) {
	srv := pgtest.Start(t)
	bin := cairnBinary(t)
	agent := crashAgent(t)
	cache := cacheForTests(t)
	var full time.Duration
	for range 2 {
		start := time.Now()
		clean := exec.Command(bin, "run", "--store", srv.NewDatabase(t), "--cache", cache, "--json", "-f", agent)
		if out, err := clean.CombinedOutput(); err != nil {
			t.Fatalf("uninterrupted run: %v\n%s", err, out)
		}
		full = time.Since(start)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for trial := 0; trial < *crashTrials; trial++ {
		delay := time.Duration(rng.Int63n(int64(full)))
		t.Run(fmt.Sprintf("kill-after-%s", delay.Round(time.Millisecond)), func(t *testing.T) {
			url := srv.NewDatabase(t)
			cmd := exec.Command(bin, "run", "--store", url, "--cache", cache, "--json", "--id", "victim", "-f", agent)
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			resumeKilled(t, bin, url, cache, out.Bytes())
		})
	}
}
