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

// schemaLock is the advisory lock key that keeps two processes from
// migrating one database at once.
const schemaLock = 0x636169726e // "cairn"

// readVersion reads the schema version of the database; 0 when cairn has
// never set it up.
func readVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v int
	err := q.QueryRow(ctx, `SELECT version FROM cairn_schema`).Scan(&v)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return 0, nil
	}
	return v, err
}

// migrate brings the database's schema to this build's version. A schema
// newer than this build is a *checkpoint.FutureSchemaError, found before
// anything is written.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return migrateTo(ctx, pool, ms, schema)
}

// migrateTo applies the migrations in ms the database lacks.
func migrateTo(ctx context.Context, pool *pgxpool.Pool, ms []migration, schema string) error {
	v, err := readVersion(ctx, pool)
	if err != nil {
		return fmt.Errorf("read schema version: %w", wrapConn(err))
	}
	if err := checkVersion(v, len(ms)); err != nil || v == len(ms) {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
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
		v, err := readVersion(ctx, tx)
		if errors.Is(err, pgx.ErrNoRows) {
			v, err = 0, nil
			_, err = tx.Exec(ctx, `INSERT INTO cairn_schema VALUES (0)`)
		}
		if err != nil {
			return err
		}
		if err := checkVersion(v, len(ms)); err != nil {
			return err
		}
		for _, m := range ms[v:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
		}
		_, err = tx.Exec(ctx, `UPDATE cairn_schema SET version = $1`, len(ms))
		return err
	})
}

// checkVersion refuses a schema newer than this build's.
func checkVersion(v, supported int) error {
	if v > supported {
		return &checkpoint.FutureSchemaError{File: "the database's cairn schema", Version: v, Supported: supported}
	}
	return nil
}
