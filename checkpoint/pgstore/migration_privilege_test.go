package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: an upgraded cairn whose role may use cairn's tables but is
// not their owner (a deployment that gives cairn a role of its own, the
// tables made by an administrator) failed to migrate the database with the
// server's bare "must be owner of table", which says neither that nothing
// was changed nor how to migrate. It says both, and the schema stays at
// the version it had.
func TestMigrationRefusedForLackOfPrivilegeIsSaid(t *testing.T) {
	for _, c := range []struct {
		name, grant, said string
	}{
		{"no CREATE in the schema", "", "permission denied for schema public"},
		{"not the tables' owner", "GRANT CREATE ON SCHEMA public TO cairn_user", "must be owner of table"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := sharedURL(t)
			ctx := context.Background()
			must(t, pgstore.MigrateTo(ctx, url, pgstore.SchemaVersion()-1))
			execSQL(t, url, `DO $$ BEGIN
					IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'cairn_user') THEN CREATE ROLE cairn_user LOGIN; END IF;
				END $$;
				GRANT ALL ON ALL TABLES IN SCHEMA public TO cairn_user;
				GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO cairn_user`)
			if c.grant != "" {
				execSQL(t, url, c.grant)
			}
			userURL := strings.Replace(url, "//cairn@", "//cairn_user@", 1)
			if userURL == url {
				t.Skip("the test server's URL names no user cairn to replace")
			}
			_, err := pgstore.Open(ctx, userURL)
			if err == nil {
				t.Fatal("a role that does not own cairn's tables migrated them")
			}
			for _, want := range []string{c.said, "nothing was changed", "owns cairn's tables", "migrate"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
			var v int
			query(t, url, `SELECT version FROM cairn_schema`, nil, &v)
			if v != pgstore.SchemaVersion()-1 {
				t.Fatalf("schema version %d after the refused migration, want %d", v, pgstore.SchemaVersion()-1)
			}
			s, err := pgstore.Open(ctx, url)
			if err != nil {
				t.Fatalf("the owner's cairn, after: %v", err)
			}
			s.Close()
		})
	}
}
