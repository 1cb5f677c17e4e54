package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// --store takes a key=value connection string as a PostgreSQL database,
// as pgx does, not as the name of a directory to make; a URL's scheme is
// read in any case; and no message repeats a password --store holds, nor
// blames --store for a bad --namespace.
func TestKeyValueStoreIsPostgres(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	c, err := pgconn.ParseConfig(url)
	must(t, err)
	kv := fmt.Sprintf("host=%s port=%d user=%s password=secret dbname=%s", c.Host, c.Port, c.User, c.Database)
	flags := exampleAgent(t)
	flags[len(flags)-3] = kv
	agentFile, err := filepath.Abs(flags[1])
	must(t, err)
	flags[1] = agentFile
	t.Chdir(t.TempDir())
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "kv1"}, flags...)...); code != exitDone {
		t.Fatalf("run with a key=value --store: exit %d: %s", code, errOut)
	}
	if entries, _ := os.ReadDir("."); len(entries) > 0 {
		t.Fatalf("the run made %s here: a directory store", entries[0].Name())
	}
	upper := "POSTGRES" + strings.TrimPrefix(url, "postgres")
	for _, store := range []string{url, kv, upper} {
		if code, out, errOut := cairn(t, "ls", "--store", store); code != exitDone || !strings.Contains(out, "kv1") {
			t.Errorf("ls --store %s: exit %d: %s%s", store, code, out, errOut)
		}
	}
	for _, args := range [][]string{
		{"ls", "--store", "hots=127.0.0.1 password=secret dbname=cairn"},
		{"ls", "--store", "postgres://cairn:secret@127.0.0.1:1/db?lease_ttl=abc"},
		{"ls", "--store", "POSTGRES://cairn:secret@127.0.0.1:port/db"},
		{"ls", "--store", "host=127.0.0.1 password=secret sslmode=bogus"},
	} {
		code, out, errOut := cairn(t, args...)
		if code != exitUsage || strings.Contains(out+errOut, "secret") || !strings.Contains(errOut, "--store") {
			t.Errorf("%q: exit %d: %s%s", args, code, out, errOut)
		}
	}
	code, out, errOut := cairn(t, "ls", "--store", kv, "--namespace", "bad name")
	if code != exitUsage || !strings.Contains(errOut, "--namespace") || strings.Contains(errOut, "--store") ||
		strings.Contains(errOut, "URL") || strings.Contains(errOut, "secret") {
		t.Errorf("a bad --namespace: exit %d: %s%s", code, out, errOut)
	}
}
