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
	"github.com/cairnrun/cairn/internal/pgtest"
)

// A database set up by a newer cairn is refused, and left as it was.
func TestFutureSchemaRefusedUnchanged(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	s := open(t, url)
	committedAgent(t, s, "a1", 1)
	s.Close()

	execSQL(t, url, `UPDATE cairn_schema SET version = 99`)
	before := dump(t, url)
	_, err := pgstore.Open(context.Background(), url)
	var fe *checkpoint.FutureSchemaError
	if !errors.As(err, &fe) || !errors.Is(err, checkpoint.ErrFutureSchema) || fe.Version != 99 || fe.Supported != pgstore.SchemaVersion() {
		t.Fatalf("open of a newer schema: %v", err)
	}
	if !strings.Contains(err.Error(), "upgrade cairn") {
		t.Fatalf("the error does not say what to do: %v", err)
	}
	if after := dump(t, url); after != before {
		t.Fatalf("the database changed:\nbefore %s\nafter  %s", before, after)
	}
}

// A newer schema is refused before anything is made, even in a database
// that has only cairn's version table.
func TestFutureSchemaOfAnEmptyDatabase(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	execSQL(t, url, `CREATE TABLE cairn_schema (version integer NOT NULL); INSERT INTO cairn_schema VALUES (`+fmt.Sprint(pgstore.SchemaVersion()+1)+`)`)
	before := dump(t, url)
	if _, err := pgstore.Open(context.Background(), url); !errors.Is(err, checkpoint.ErrFutureSchema) {
		t.Fatalf("open: %v", err)
	}
	if after := dump(t, url); after != before {
		t.Fatalf("the database changed:\nbefore %s\nafter  %s", before, after)
	}
}

// Opening an up-to-date database again changes nothing, and two stores
// opening a new one at once both succeed.
func TestMigrationOnceAndConcurrently(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := pgstore.Open(context.Background(), url)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		must(t, <-errs)
	}
	var v int
	query(t, url, `SELECT version FROM cairn_schema`, nil, &v)
	if v != pgstore.SchemaVersion() || v < 1 {
		t.Fatalf("schema version %d, want %d", v, pgstore.SchemaVersion())
	}
	before := dump(t, url)
	open(t, url)
	if after := dump(t, url); after != before {
		t.Fatalf("a second open changed the database:\nbefore %s\nafter  %s", before, after)
	}
}

func execSQL(t testing.TB, url, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	must(t, err)
}

// dump describes the database: its tables and functions, the schema
// version and how many rows each of cairn's tables holds.
func dump(t testing.TB, url string) string {
	t.Helper()
	var out string
	query(t, url, `SELECT string_agg(c.relname || ':' || c.relkind::text, ' ' ORDER BY c.relname)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'`, nil, &out)
	var fns, rows string
	query(t, url, `SELECT coalesce(string_agg(proname, ' '), '') FROM pg_proc WHERE proname LIKE 'cairn%'`, nil, &fns)
	query(t, url, `SELECT coalesce(string_agg(format('%s=%s', t, (xpath('/row/n/text()',
		query_to_xml(format('SELECT count(*) AS n FROM %I', t), false, true, '')))[1]::text), ' ' ORDER BY t), '')
		FROM unnest(ARRAY(SELECT tablename FROM pg_tables WHERE tablename LIKE 'cairn%')) AS t`, nil, &rows)
	var v string
	query(t, url, `SELECT coalesce(string_agg(version::text, ','), 'none') FROM cairn_schema`, nil, &v)
	return out + " | " + fns + " | " + rows + " | version " + v
}
