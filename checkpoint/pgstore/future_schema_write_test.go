package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// A store that opened the database, whose schema another node then
// migrated to a newer version, is refused its next commit and its next
// agent's creation, saying to upgrade, and the database keeps what it
// had; where it went on writing with the older code.
func TestWriteAfterNewerSchemaRefused(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, log, 1)
	lock2, err := s.Lock("a2", checkpoint.ThisProcess("run-b"))
	must(t, err)

	newer := pgstore.SchemaVersion() + 1
	execSQL(t, url, fmt.Sprintf(`UPDATE cairn_schema SET version = %d`, newer))
	before := dump(t, url)

	refused := func(what string, err error) {
		t.Helper()
		var fe *checkpoint.FutureSchemaError
		if !errors.As(err, &fe) || fe.Version != newer || fe.Supported != pgstore.SchemaVersion() {
			t.Fatalf("%s after a newer schema: %v", what, err)
		}
		if !strings.Contains(err.Error(), "upgrade cairn") {
			t.Fatalf("%s: the error does not say what to do: %v", what, err)
		}
	}
	_, err = log.Commit(append(roundRecords(2), checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2})...)
	refused("commit", err)
	_, err = s.Create("a2", newState("a2"))
	refused("create", err)
	if after := dump(t, url); after != before {
		t.Fatalf("the database changed:\nbefore %s\nafter  %s", before, after)
	}
	must(t, lock.Unlock())
	must(t, lock2.Unlock())

	execSQL(t, url, fmt.Sprintf(`UPDATE cairn_schema SET version = %d`, pgstore.SchemaVersion()))
	rec, err := open(t, url).Read("a1")
	must(t, err)
	if rec.State.Round != 1 || len(rec.Tail) != 0 {
		t.Fatalf("agent a1 at round %d with %d records after it, want round 1 and none", rec.State.Round, len(rec.Tail))
	}
}

// Regression: a lease take checked no schema version, so a store opened
// before another node migrated the database took leases (and every run
// and resume begins with one) on a schema newer than it writes. A take,
// a steal among them, of an agent new or old, is refused saying to
// upgrade, and the database keeps what it had.
func TestLeaseTakeOnNewerSchemaRefused(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	committedAgent(t, s, "a1", 1)
	newer := pgstore.SchemaVersion() + 1
	execSQL(t, url, fmt.Sprintf(`UPDATE cairn_schema SET version = %d`, newer))
	before := dump(t, url)
	var epoch int64
	query(t, url, `SELECT epoch FROM cairn_leases WHERE agent = 'a1'`, nil, &epoch)

	for _, c := range []struct {
		name  string
		take  func(string, checkpoint.Holder) (checkpoint.Lock, error)
		agent string
	}{
		{"lock of an agent", s.Lock, "a1"},
		{"lock of a new agent", s.Lock, "a2"},
		{"steal", s.Steal, "a1"},
	} {
		lock, err := c.take(c.agent, checkpoint.ThisProcess("run-b"))
		var fe *checkpoint.FutureSchemaError
		if !errors.As(err, &fe) || fe.Version != newer || fe.Supported != pgstore.SchemaVersion() {
			if lock != nil {
				lock.Unlock()
			}
			t.Fatalf("%s after a newer schema: %v, want a *checkpoint.FutureSchemaError", c.name, err)
		}
		if !strings.Contains(err.Error(), "upgrade cairn") || !strings.Contains(err.Error(), c.agent) {
			t.Errorf("%s: the error does not say which agent and what to do: %v", c.name, err)
		}
	}
	if after := dump(t, url); after != before {
		t.Fatalf("the database changed:\nbefore %s\nafter  %s", before, after)
	}
	var after int64
	query(t, url, `SELECT epoch FROM cairn_leases WHERE agent = 'a1'`, nil, &after)
	if after != epoch {
		t.Fatalf("the lease of a1 was taken: epoch %d, was %d", after, epoch)
	}
}

// The fence of the builds before schema version 8, which check no
// version, refuses their writes once the database is at version 8 or
// later, saying to upgrade.
func TestOlderBuildsFenceRefused(t *testing.T) {
	url := sharedURL(t)
	open(t, url)
	err := execErr(t, url, `SELECT cairn_fence('a1', 1, 1000)`)
	if err == nil || !strings.Contains(err.Error(), "upgrade cairn") || !strings.Contains(err.Error(), "CF002") {
		t.Fatalf("an older build's fence: %v", err)
	}
}

// execErr runs sql on url and returns what the server said.
func execErr(t testing.TB, url, sql string) error {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
