package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// `cairn log` of an agent whose open round another process is running
// says the round is in progress, and where, rather than that it was
// interrupted and resume continues it (a resume would be refused). Once
// the process lets go, the round is interrupted. Both stores: the
// directory's flock, and PostgreSQL's lease, which names the holder and
// when its lease expires.
func TestLogOfRunningAgentSaysInProgress(t *testing.T) {
	for _, c := range []struct {
		name  string
		store func(t *testing.T) (string, checkpoint.Store)
		want  []string
	}{
		{"directory", func(t *testing.T) (string, checkpoint.Store) {
			dir := t.TempDir()
			s, err := host.OpenStore(dir)
			must(t, err)
			return dir, s
		}, []string{"round 6 is in progress", "another process (run run-on-b)"}},
		{"postgres", func(t *testing.T) (string, checkpoint.Store) {
			url := pgtest.Shared(t).NewDatabase(t)
			s, err := pgstore.Open(context.Background(), url)
			must(t, err)
			t.Cleanup(s.Close)
			return url, s
		}, []string{"round 6 is in progress in process 4242 on node-b (run run-on-b)", "lease expires at"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, s := c.store(t)
			flags := exampleAgent(t)
			flags[len(flags)-3] = store
			if code, _, errOut := cairn(t, append([]string{"run", "--id", "l1"}, flags...)...); code != exitDone {
				t.Fatalf("run: exit %d: %s", code, errOut)
			}
			lock, err := s.Lock("l1", checkpoint.Holder{PID: 4242, Host: "node-b", Run: "run-on-b", Started: time.Now()})
			must(t, err)
			rec, log, err := s.Open("l1")
			must(t, err)
			round := rec.State.Round + 1
			turn := conversation.Message{Role: conversation.RoleAssistant, Text: "one more look",
				ToolCalls: []conversation.ToolCall{{ID: "call_x", Name: "list_dir", Input: `{"path":"."}`}}}
			must(t, log.Append(
				checkpoint.Record{Type: checkpoint.RecRunStarted, Time: time.Now(), Run: &checkpoint.RunInfo{ID: "run-on-b", Started: time.Now(), FirstRound: rec.State.Round}},
				checkpoint.Record{Type: checkpoint.RecTurn, Time: time.Now(), Round: round, Message: &turn}))
			must(t, log.Sync())

			_, out, errOut := cairn(t, "log", "--store", store, "l1")
			for _, want := range c.want {
				if !strings.Contains(out, want) {
					t.Errorf("log of the running agent does not say %q:\n%s%s", want, out, errOut)
				}
			}
			if strings.Contains(out, "interrupted") || strings.Contains(out, "cairn resume continues") {
				t.Errorf("log of the running agent says it was interrupted:\n%s", out)
			}
			must(t, log.Close())
			must(t, lock.Unlock())
			if _, out, _ := cairn(t, "log", "--store", store, "l1"); !strings.Contains(out, "round 6 was interrupted; cairn resume continues it") {
				t.Errorf("log once the process let go:\n%s", out)
			}
		})
	}
}
