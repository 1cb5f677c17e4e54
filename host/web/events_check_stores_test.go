package web

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

// The stores, each with its Read counted: promoted methods keep what the
// store implements besides (checkpoint.Checker among them).
type (
	fileReads struct {
		*checkpoint.FileStore
		n *atomic.Int64
	}
	memReads struct {
		*checkpoint.MemStore
		n *atomic.Int64
	}
	pgReads struct {
		*pgstore.Store
		n *atomic.Int64
	}
)

func (s fileReads) Read(id string) (*checkpoint.Recovered, error) {
	s.n.Add(1)
	return s.FileStore.Read(id)
}

func (s memReads) Read(id string) (*checkpoint.Recovered, error) {
	s.n.Add(1)
	return s.MemStore.Read(id)
}

func (s pgReads) Read(id string) (*checkpoint.Recovered, error) {
	s.n.Add(1)
	return s.Store.Read(id)
}

// Regression: on the PostgreSQL and memory stores, which had no
// checkpoint.Checker, GET /api/agents/{id}/events read and decoded the
// agent's whole state to learn whether it could be read, on every
// request. On every store the route now refuses an unreadable agent with
// the error GET /api/agents/{id} gives, and plays a readable one back
// without reading its state.
func TestEventsRouteChecksTheAgentOnEveryStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		// open returns the store, the store the server is given (its
		// reads counted) and a function that damages agent id.
		open func(t *testing.T, n *atomic.Int64) (checkpoint.Store, checkpoint.Store, func(id string))
	}{
		{"file", func(t *testing.T, n *atomic.Int64) (checkpoint.Store, checkpoint.Store, func(string)) {
			s, err := checkpoint.OpenFileStore(t.TempDir())
			must(t, err)
			return s, fileReads{s, n}, func(id string) {
				snaps, err := filepath.Glob(filepath.Join(s.Dir(), "agents", id, "snap-*.cbor"))
				must(t, err)
				data, err := os.ReadFile(snaps[len(snaps)-1])
				must(t, err)
				for i := 60; i < 100; i++ { // inside the state frame
					data[i] ^= 0xaa
				}
				must(t, os.WriteFile(snaps[len(snaps)-1], data, 0o600))
			}
		}},
		{"memory", func(t *testing.T, n *atomic.Int64) (checkpoint.Store, checkpoint.Store, func(string)) {
			s := checkpoint.NewMemStore()
			return s, memReads{s, n}, func(id string) {
				lock, err := s.Lock(id, checkpoint.ThisProcess("test"))
				must(t, err)
				defer lock.Unlock()
				_, log, err := s.Open(id)
				must(t, err)
				defer log.Close()
				// A defective writer's commit, kept though it does not follow.
				if _, err := log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Round: 7}); err == nil {
					t.Fatal("a commit of round 7 after round 0 was taken")
				}
			}
		}},
		{"postgres", func(t *testing.T, n *atomic.Int64) (checkpoint.Store, checkpoint.Store, func(string)) {
			url := pgtest.Start(t).NewDatabase(t)
			s, err := pgstore.Open(context.Background(), url)
			must(t, err)
			t.Cleanup(s.Close)
			return s, pgReads{s, n}, func(id string) {
				conn, err := pgx.Connect(context.Background(), url)
				must(t, err)
				defer conn.Close(context.Background())
				_, err = conn.Exec(context.Background(),
					`UPDATE cairn_agents SET snapshot = overlay(snapshot placing '\xaaaaaaaa'::bytea from 40) WHERE id = $1`, id)
				must(t, err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reads atomic.Int64
			store, counted, damage := tc.open(t, &reads)
			storeAgent(t, store, "good", 64)
			storeAgent(t, store, "bad", 1)
			damage("bad")
			f := newFixtureOn(t, Config{Loopback: true}, counted)

			reads.Store(0)
			resp := f.do("/api/agents/good/events", nil, "")
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || strings.Count(string(got), "\n") != 10 {
				t.Fatalf("events of a readable agent: %d %s", resp.StatusCode, got)
			}
			if n := reads.Load(); n != 0 {
				t.Errorf("events of a readable agent read its state %d times; want it checked without", n)
			}

			agent := f.do("/api/agents/bad", nil, "")
			want, _ := io.ReadAll(agent.Body)
			if agent.StatusCode != http.StatusInternalServerError {
				t.Fatalf("GET /api/agents/bad: %d %s; want 500", agent.StatusCode, want)
			}
			for _, header := range [][]string{nil, {"Accept", "text/event-stream"}} {
				resp := f.do("/api/agents/bad/events", nil, "", header...)
				got, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusInternalServerError || string(got) != string(want) {
					t.Errorf("events of an unreadable agent %q: %d %q; want GET /api/agents/bad's 500 %q", header, resp.StatusCode, got, want)
				}
			}
		})
	}
}
