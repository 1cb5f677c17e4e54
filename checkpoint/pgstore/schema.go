package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairnrun/cairn/checkpoint"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one embedded SQL file: migrations/<version>_<name>.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded migrations in order; their versions run
// 1, 2, 3… without a gap.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: no version in its name", n)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d", m.name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the version of the database schema this build makes.
func SchemaVersion() int {
	ms, _ := migrations()
	return len(ms)
}

// migrationHook, when set by a test, is called in a migration's
// transaction after each file it applies.
var migrationHook func()

// schemaLock is the advisory lock key that keeps two processes from
// migrating one database at once.
const schemaLock = 0x636169726e // "cairn"

// errNoVersion is a version table without a row: a database that cairn
// never set up if it holds no other table of cairn's, damage if it does.
var errNoVersion = errors.New("no version row")

// readVersion reads the schema version of the database; 0 when cairn has
// never set it up, errNoVersion when the table has no row, a *SchemaError
// for more than one row or a negative version.
func readVersion(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, vt versionTable) (int, error) {
	rows, err := q.Query(ctx, `SELECT version FROM cairn_schema`)
	var vs []int
	if err == nil {
		vs, err = pgx.CollectRows(rows, pgx.RowTo[int])
	}
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42P01": // undefined_table
		return 0, nil
	case err != nil:
		return 0, err
	case len(vs) == 0:
		return 0, errNoVersion
	case len(vs) > 1:
		return 0, vt.damaged(fmt.Sprintf("%d version rows", len(vs)), "where cairn keeps one")
	case vs[0] < 0:
		return 0, vt.damaged(fmt.Sprintf("version %d", vs[0]), "which no cairn writes")
	}
	return vs[0], nil
}

// versionTable names the schema version table, for its errors.
type versionTable struct {
	name      string
	supported int
}

func newVersionTable(schema string, supported int) versionTable {
	name := "cairn_schema"
	if schema != "" {
		name = pgx.Identifier{schema, name}.Sanitize()
	}
	return versionTable{name: name, supported: supported}
}

func (vt versionTable) damaged(found, reason string) *SchemaError {
	return &SchemaError{Table: vt.name, Found: found, Reason: reason, Supported: vt.supported}
}

// found says what the table holds, version v or no row.
func found(v int, missing bool) string {
	if missing {
		return "no version row"
	}
	return fmt.Sprintf("version %d", v)
}

// duplicate reports whether a migration failed for making what the
// database already has — its version row is behind its tables — and what
// the server said.
func duplicate(err error) (string, bool) {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return "", false
	}
	switch pgErr.Code {
	case "42P07", "42701", "42723", "42710", "42P06": // duplicate table, column, function, object, schema
		return pgErr.Message, true
	}
	return "", false
}

// lacking reports whether a migration failed for want of a table, column
// or function an earlier version made — the version row is ahead of the
// tables — and what the server said.
func lacking(err error) (string, bool) {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return "", false
	}
	switch pgErr.Code {
	case "42P01", "42703", "42883": // undefined table, column, function
		return pgErr.Message, true
	}
	return "", false
}

// migrate brings the database's schema to this build's version. A schema
// newer than this build is a *checkpoint.FutureSchemaError, found before
// anything is written. A migration that meets a failure of the connection
// (a restart of the database: its connection cut, or the server refusing
// or starting up) is run again, pausing longer each time (up to a
// second), until ctx ends, as a write is: it is one transaction, which the
// failure rolled back whole, or which committed and, run again, finds its
// version and does nothing.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	err = migrateTo(ctx, pool, ms, schema)
	for pause := 50 * time.Millisecond; err != nil && errors.Is(wrapConn(err), ErrUnavailable); pause = min(2*pause, time.Second) {
		pool.Reset() // its other connections went with the server
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		err = migrateTo(ctx, pool, ms, schema)
	}
	return err
}

// migrateTo applies the migrations in ms the database lacks. A damaged
// version table is a *SchemaError, found before anything is written or
// in the transaction that would have written, which is rolled back.
func migrateTo(ctx context.Context, pool *pgxpool.Pool, ms []migration, schema string) error {
	vt := newVersionTable(schema, len(ms))
	v, err := readVersion(ctx, pool, vt)
	var se *SchemaError
	switch {
	case errors.As(err, &se):
		return err
	case errors.Is(err, errNoVersion):
		// Set up in the transaction, unless cairn's tables are there.
	case err != nil:
		return fmt.Errorf("read schema version: %w", wrapConn(err))
	default:
		if err := checkVersion(v, len(ms)); err != nil || v == len(ms) {
			return err
		}
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		if schema != "" {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS cairn_schema (version integer NOT NULL)`); err != nil {
			return err
		}
		v, err := readVersion(ctx, tx, vt)
		missing := errors.Is(err, errNoVersion)
		if missing {
			_, err = tx.Exec(ctx, `INSERT INTO cairn_schema VALUES (0)`)
		}
		if err != nil {
			return err
		}
		if err := checkVersion(v, len(ms)); err != nil {
			return err
		}
		for _, m := range ms[v:] {
			_, err := tx.Exec(ctx, m.sql)
			if said, dup := duplicate(err); dup {
				return vt.damaged(found(v, missing), fmt.Sprintf("but the database already has what migration %s makes (%s)", m.name, said))
			}
			if said, lacks := lacking(err); lacks && !missing && v > 0 {
				return vt.damaged(found(v, missing), fmt.Sprintf("but the database lacks what that version made, which migration %s needs (%s)", m.name, said))
			}
			if err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if migrationHook != nil {
				migrationHook()
			}
		}
		_, err = tx.Exec(ctx, `UPDATE cairn_schema SET version = $1`, len(ms))
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
		return fmt.Errorf("migrate the database's cairn schema from version %d to %d: %w: the role this cairn connects as "+
			"may not change cairn's tables; nothing was changed — run this cairn once with the URL of the role that owns "+
			"cairn's tables (or of a superuser) to migrate the database, then go on with this role", v, len(ms), err)
	}
	return err
}

// checkVersion refuses a schema newer than this build's.
func checkVersion(v, supported int) error {
	if v > supported {
		return &checkpoint.FutureSchemaError{File: "the database's cairn schema", Version: v, Supported: supported}
	}
	return nil
}
