package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// D4: a cairn_schema that no cairn would have left — a negative version,
// no version row beside cairn's tables, two rows, a version behind the
// tables the database has, a version ahead of them — is refused as
// corruption, naming the table and saying what to do, with nothing
// changed; never a panic, a bare "no rows in result set" or a bare
// "relation already exists" or "does not exist".
func TestDamagedSchemaVersionRefused(t *testing.T) {
	latest := pgstore.SchemaVersion()
	for _, c := range []struct {
		name, damage string
	}{
		{"negative version", `UPDATE cairn_schema SET version = -1`},
		{"no version row", `DELETE FROM cairn_schema`},
		{"two version rows", fmt.Sprintf(`INSERT INTO cairn_schema VALUES (%d)`, latest)},
		{"version behind the tables", `UPDATE cairn_schema SET version = 3`},
		{"version zero beside the tables", `UPDATE cairn_schema SET version = 0`},
		// Regression: "migration 0006_durable.sql: ERROR: relation
		// "cairn_agents" does not exist".
		{"version ahead of the tables", `DO $$ DECLARE r record; BEGIN
			FOR r IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema()
				AND tablename LIKE 'cairn\_%' AND tablename <> 'cairn_schema' LOOP
				EXECUTE 'DROP TABLE ' || quote_ident(r.tablename) || ' CASCADE';
			END LOOP; END $$; UPDATE cairn_schema SET version = 3`},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := sharedURL(t)
			s := open(t, url)
			committedAgent(t, s, "a1", 1)
			s.Close()

			execSQL(t, url, c.damage)
			before := dump(t, url)
			err := openNoPanic(url)
			if !errors.Is(err, checkpoint.ErrCorrupt) {
				t.Fatalf("open: %v, want checkpoint.ErrCorrupt", err)
			}
			for _, want := range []string{"cairn_schema", "nothing was changed", "backup"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
			if after := dump(t, url); after != before {
				t.Fatalf("the database changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// openNoPanic opens a store at url and closes it, turning a panic into an
// error.
func openNoPanic(url string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	s, err := pgstore.Open(context.Background(), url)
	if err == nil {
		s.Close()
	}
	return err
}
