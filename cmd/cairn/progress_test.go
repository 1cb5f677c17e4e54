package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/host"
)

// The status line shows only work that has gone on for progressDelay, is
// erased before the next output, and shows nothing while no work is named.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf}
	p.set("compiling")
	start := p.since
	p.tick(start.Add(progressDelay / 2))
	if buf.Len() != 0 {
		t.Fatalf("drew %q before the delay", buf.String())
	}
	p.tick(start.Add(progressDelay + 2*time.Second))
	p.tick(start.Add(progressDelay + 2*time.Second + time.Millisecond))
	if got := buf.String(); got != "\r\033[K⋯ compiling (3s)" {
		t.Fatalf("status line %q, want it drawn once a second", got)
	}
	buf.Reset()
	p.around(func() { buf.WriteString("output\n") }, "")
	if got := buf.String(); got != "\r\033[Koutput\n" {
		t.Fatalf("output after the status line: %q", got)
	}
	buf.Reset()
	p.tick(time.Now().Add(time.Hour))
	if buf.Len() != 0 {
		t.Fatalf("drew %q with no work named", buf.String())
	}
}

// Without a terminal, or with --json, there is no status line at all.
func TestProgressQuiet(t *testing.T) {
	if p := newProgress(&bytes.Buffer{}, false); p != nil {
		t.Fatal("a status line on a buffer")
	}
	if p := newProgress(os.Stderr, true); p != nil {
		t.Fatal("a status line with --json")
	}
	var nilP *progress
	nilP.set("x")
	printed := false
	nilP.around(func() { printed = true }, "y")
	nilP.close()
	if !printed {
		t.Fatal("a nil progress did not print the output")
	}
	_, _, errOut := cairn(t, "tools", "ls")
	if strings.Contains(errOut, "⋯") {
		t.Fatalf("status line without a terminal: %q", errOut)
	}
}

// While tool modules compile, the status line says so beside what the run
// waits for; once they have, it no longer does.
func TestProgressSaysCompiling(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf}
	compiling := true
	p.watchCompiling(func() bool { return compiling })
	p.set("waiting for the model")
	p.tick(p.since.Add(progressDelay + time.Second))
	if got := buf.String(); !strings.Contains(got, "waiting for the model; "+compilingNote) {
		t.Fatalf("status line while compiling: %q", got)
	}
	compiling = false
	buf.Reset()
	p.tick(p.since.Add(progressDelay + 2*time.Second))
	if got := buf.String(); got != "\r\033[K⋯ waiting for the model (3s)" {
		t.Fatalf("status line after compiling: %q", got)
	}
}

// Regression: on a first run, the status line said "finishing the round"
// when one call of a round ended while another (its module compiling)
// still ran. It says the tools run until the last call ends.
func TestStatusWhileAnotherCallRuns(t *testing.T) {
	r := newRenderer(io.Discard, io.Discard, false)
	for _, step := range []struct {
		e    host.EventType
		want string
	}{
		{host.EventToolStart, "running tools"},
		{host.EventToolStart, "running tools"},
		{host.EventToolEnd, "running tools"},
		{host.EventToolEnd, "finishing the round: applying changes, committing it"},
		{host.EventRoundEnd, "waiting for the model"},
	} {
		if got := r.waiting(host.Event{Type: step.e}); got != step.want {
			t.Errorf("after %s: %q, want %q", step.e, got, step.want)
		}
	}
}
