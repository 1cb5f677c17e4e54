package pgstore_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: an import that the database refused after the agent's
// state was written left a partial agent, and the next import was
// refused with "already exists". A failed import leaves no agent, and
// the import run again once the cause is gone makes the whole agent.
func TestImportFailedPartwayLeavesNoAgent(t *testing.T) {
	src := checkpoint.NewMemStore()
	lock, err := src.Lock("a1", checkpoint.ThisProcess("run"))
	must(t, err)
	log, err := src.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, log, 1)
	must(t, log.Close())
	w, err := src.Events("a1")
	must(t, err)
	io.WriteString(w, "{\"type\":\"run_start\"}\n")
	must(t, w.Close())
	lock.Unlock()
	a, err := checkpoint.Export(src, "a1")
	must(t, err)

	url := sharedURL(t)
	dst := open(t, url)
	// The server refuses the event history, the import's last write.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON cairn_events FOR EACH ROW EXECUTE FUNCTION refuse()`)
	must(t, err)
	err = checkpoint.Import(dst, a, checkpoint.ThisProcess("import"))
	if err == nil {
		t.Fatal("import whose event history the database refused succeeded")
	}
	if dst.Exists("a1") {
		t.Fatalf("the failed import (%v) left agent a1 behind", err)
	}
	_, err = conn.Exec(ctx, `DROP TRIGGER refuse ON cairn_events`)
	must(t, err)
	if err := checkpoint.Import(dst, a, checkpoint.ThisProcess("import")); err != nil {
		if errors.Is(err, checkpoint.ErrExists) {
			t.Fatalf("import again after a failed one: %v", err)
		}
		t.Fatal(err)
	}
	rec, err := dst.Read("a1")
	must(t, err)
	if rec.State.Round != 1 {
		t.Fatalf("imported agent at round %d, want 1", rec.State.Round)
	}
}

// Regression: an import of a tree whose sub-agent the database refused,
// after its parent's event history was written, removed the parent's
// state and kept its history, and the import run again added the history
// once more: every event of the parent twice.
func TestImportRetriedAfterASubAgentFailedHasEachEventOnce(t *testing.T) {
	src := checkpoint.NewMemStore()
	makeAgent := func(id, parent string) {
		lock, err := src.Lock(id, checkpoint.ThisProcess("run"))
		must(t, err)
		defer lock.Unlock()
		st := newState(id)
		if parent != "" {
			st.Parent = &checkpoint.Parent{Agent: parent, Call: "call_1", Name: "helper", Depth: 1}
		}
		log, err := src.Create(id, st)
		must(t, err)
		commitRound(t, log, 1)
		must(t, log.Close())
		w, err := src.Events(id)
		must(t, err)
		io.WriteString(w, "{\"type\":\"run_start\",\"agent\":\""+id+"\"}\n")
		must(t, w.Close())
	}
	makeAgent("a1", "")
	makeAgent("c1", "a1")
	a, err := checkpoint.Export(src, "a1")
	must(t, err)

	url := sharedURL(t)
	dst := open(t, url)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	// The server refuses the sub-agent's event history, after a1's is in.
	_, err = conn.Exec(ctx, `CREATE FUNCTION refuse_c1() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.agent = 'c1' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER refuse_c1 BEFORE INSERT ON cairn_events FOR EACH ROW EXECUTE FUNCTION refuse_c1()`)
	must(t, err)
	if err := checkpoint.Import(dst, a, checkpoint.ThisProcess("import")); err == nil {
		t.Fatal("an import whose sub-agent's event history the database refused succeeded")
	}
	_, err = conn.Exec(ctx, `DROP TRIGGER refuse_c1 ON cairn_events`)
	must(t, err)
	must(t, checkpoint.Import(dst, a, checkpoint.ThisProcess("import")))
	for _, id := range []string{"a1", "c1"} {
		r, err := dst.ReadEvents(id)
		must(t, err)
		got, err := io.ReadAll(r)
		r.Close()
		must(t, err)
		if want := "{\"type\":\"run_start\",\"agent\":\"" + id + "\"}\n"; string(got) != want {
			t.Errorf("agent %s's event history after the import run again: %q, want %q", id, got, want)
		}
	}
}
