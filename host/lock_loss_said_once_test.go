package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// lockLosingStore's journals lose their lock once a call's result is
// appended: from then on every sync and commit fails with lost, as a
// file store's does once the agent's lock file is removed.
type lockLosingStore struct {
	checkpoint.Store
	lost error
}

func (s lockLosingStore) Create(id string, st *checkpoint.State) (checkpoint.Log, error) {
	log, err := s.Store.Create(id, st)
	if err != nil {
		return nil, err
	}
	return &lockLosingLog{Log: log, lost: s.lost}, nil
}

type lockLosingLog struct {
	checkpoint.Log
	lost    error
	results atomic.Bool
}

func (l *lockLosingLog) Append(recs ...checkpoint.Record) error {
	for _, r := range recs {
		if r.Type == checkpoint.RecResult {
			l.results.Store(true)
		}
	}
	return l.Log.Append(recs...)
}

func (l *lockLosingLog) Sync() error {
	if l.results.Load() {
		return l.lost
	}
	return l.Log.Sync()
}

func (l *lockLosingLog) Commit(recs ...checkpoint.Record) (int64, error) {
	if l.results.Load() {
		return 0, l.lost
	}
	return l.Log.Commit(recs...)
}

// failingLog fails its appends and syncs as it is told.
type failingLog struct {
	checkpoint.Log
	appendErr, syncErr error
}

func (l failingLog) Append(...checkpoint.Record) error { return l.appendErr }
func (l failingLog) Sync() error                       { return l.syncErr }

// Regression: with the agent's lock file removed while a round's calls
// ran, the run failed with the lock's error once per call that finished
// after it, joined by newlines, which the run's one-line status (and
// `cairn show`, `cairn runs`) showed as "journal the results of finished
// calls: …\x0ajournal the results of finished calls: …". The round's
// failure is said once, on one line; and a batch whose append failed is
// not synced to fail again.
func TestLockLossIsSaidOnce(t *testing.T) {
	lost := fmt.Errorf("agent \"L5\": its lock file was removed while this process held it: %w", checkpoint.ErrLockLost)
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: lockLosingStore{checkpoint.NewMemStore(), lost}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	af := agentIn(t, "name: l\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin, only: [list_dir]}]\n",
		"turns:\n  - tool_calls: [{name: list_dir, input: {}}, {name: list_dir, input: {}}, {name: list_dir, input: {}}, {name: list_dir, input: {}}]\n  - text: done\n")
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "L5", Prompt: "look"})
	if res == nil || res.Status != StatusFailed {
		t.Fatalf("run: %+v, %v; want it failed", res, err)
	}
	if strings.Count(res.Reason, "journal the results of finished calls") != 1 || strings.Count(res.Reason, "while this process held it") != 1 ||
		strings.Contains(res.Reason, "\n") {
		t.Errorf("the run's failure does not say its cause once, on one line:\n%s", res.Reason)
	}

	for _, tt := range []struct {
		name string
		log  failingLog
	}{
		{"append and sync failing alike", failingLog{appendErr: lost, syncErr: lost}},
		{"sync failing", failingLog{syncErr: lost}},
	} {
		g := newRoundSync(tt.log)
		err := g.write(checkpoint.Record{Type: checkpoint.RecResult, Round: 1, Call: "call_1_0"})
		if !errors.Is(err, checkpoint.ErrLockLost) || strings.Count(err.Error(), "while this process held it") != 1 {
			t.Errorf("%s: %v; want the lost lock, said once", tt.name, err)
		}
		if again := g.write(checkpoint.Record{Type: checkpoint.RecResult, Round: 1, Call: "call_1_1"}); again != err {
			t.Errorf("%s: a write after the failure: %v; want the round's failure", tt.name, again)
		}
	}
}
