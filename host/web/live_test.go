package web

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// A follower sees a run's events while the run goes on: it connects while
// the run waits (here, for a person asked on its behalf), reads what has
// happened so far, and then, without reconnecting, what the run does after
// the decision, to its end. What it read is the history, byte for byte.
func TestFollowSeesTheRunAsItGoes(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	dir := filepath.Join(f.agents, "live")
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(approvalScript), 0o644))
	af, err := host.ParseAgentFile([]byte(approvalAgent), dir)
	must(t, err)
	asked, decide := make(chan struct{}), make(chan struct{})
	ended := make(chan *host.Result, 1)
	go func() {
		res, err := f.eng.Run(context.Background(), host.RunOptions{Agent: af, ID: "live", Prompt: "go",
			Approver: func(ctx context.Context, req host.ApprovalRequest) (host.Decision, error) {
				close(asked)
				<-decide
				return host.Decision{Approved: true}, nil
			}})
		if err != nil {
			t.Error(err)
		}
		ended <- res
	}()
	<-asked
	var v agentView
	f.getJSON("/api/agents/live", &v)
	if v.Status != "running" {
		t.Fatalf("while the run waits: %+v", v)
	}
	resp := f.do("/api/agents/live/events?follow=1", nil, "")
	r := bufio.NewReader(resp.Body)
	var before []byte
	for !bytes.Contains(before, []byte(`"approval_required"`)) {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("stream ended before the approval request: %v\n%s", err, before)
		}
		before = append(before, line...)
	}
	if bytes.Contains(before, []byte(`"run_end"`)) {
		t.Fatal("the run ended before it was decided")
	}
	close(decide)
	if res := <-ended; res.Status != host.StatusDone {
		t.Fatalf("run: %+v", res)
	}
	resp.Body = readCloser{r, resp.Body}
	after, _ := sse(t, resp)
	var got []byte
	for _, l := range strings.SplitAfter(string(before), "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			got = append(got, d...)
		}
	}
	got = append(got, after...)
	if want := f.history("live"); !bytes.Equal(got, want) {
		t.Fatalf("followed:\n%s\nhistory:\n%s", got, want)
	}
	if !bytes.Contains(after, []byte(`"run_end"`)) || !bytes.Contains(after, []byte(`"approval_decided"`)) {
		t.Fatalf("after the decision the follower read:\n%s", after)
	}
}

// readCloser reads from a buffered reader and closes the body under it.
type readCloser struct {
	*bufio.Reader
	body interface{ Close() error }
}

func (rc readCloser) Close() error { return rc.body.Close() }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
