package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// A key=value connection string names a database as a URL does, in any
// case of the URL's scheme, and nothing that reads as a path does; a
// string shown in a message has its passwords masked, whatever its form.
func TestKeyValueConnString(t *testing.T) {
	for s, want := range map[string]bool{
		"postgres://u@h/db":                     true,
		"postgresql://u@h/db":                   true,
		"POSTGRES://u@h/db":                     true,
		"PostgreSQL://u@h/db":                   true,
		"host=127.0.0.1 port=5432 dbname=cairn": true,
		"  dbname=cairn user=cairn":             true,
		"user = cairn":                          true,
		"password=secret host=h":                true,
		"/var/lib/cairn":                        false,
		"./host=db":                             false,
		"agents":                                false,
		"hots=127.0.0.1 password=secret":        false,
		"Host=db":                               false,
		"postgres:/x":                           false,
		"C:\\cairn":                             false,
		"data/x=1":                              false,
		"postgres.internal:5432/cairn":          false,
		"host":                                  false,
	} {
		if got := pgstore.IsConnString(s); got != want {
			t.Errorf("IsConnString(%q) = %v, want %v", s, got, want)
		}
	}
	for _, s := range []string{
		"postgres://cairn:secret@127.0.0.1:55432/cairn?sslmode=disable",
		"POSTGRESQL://cairn:secret@h/db",
		"postgres://cairn@h/db?password=secret&sslpassword=secret",
		"host=127.0.0.1 port=55432 user=cairn password=secret dbname=cairn",
		"host=h password='se cret' dbname=cairn",
		"host=h password = secret",
		"hots=h password=secret",
		"postgres://cairn:secret@h:bad port/db",
	} {
		if got := pgstore.Redact(s); strings.Contains(got, "secret") || strings.Contains(got, "cret") {
			t.Errorf("Redact(%q) = %q", s, got)
		}
	}
	if got := pgstore.Redact("/var/lib/cairn"); got != "/var/lib/cairn" {
		t.Errorf("Redact of a path: %q", got)
	}
}

// Open reads a key=value connection string, lease_ttl included, and a
// URL whose scheme is in capitals; a string it cannot read is ErrBadURL
// without its password, and a namespace that cannot be one is
// ErrBadNamespace, not a bad URL.
func TestOpenKeyValueConnString(t *testing.T) {
	url := sharedURL(t)
	kv := keyValue(t, url) + " lease_ttl=5s"
	s := open(t, kv)
	committedAgent(t, s, "kv1", 1)
	if !open(t, "POSTGRES"+strings.TrimPrefix(url, "postgres")).Exists("kv1") {
		t.Fatal("a URL in capitals reads another database")
	}
	_, err := pgstore.Open(context.Background(), kv+" password=secret lease_ttl=abc")
	if !errors.Is(err, pgstore.ErrBadURL) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a bad lease_ttl: %v", err)
	}
	_, err = pgstore.Open(context.Background(), "postgres://u:secret@h:port/db")
	if !errors.Is(err, pgstore.ErrBadURL) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a bad URL: %v", err)
	}
	_, err = pgstore.Open(context.Background(), url, pgstore.WithNamespace("bad name"))
	if !errors.Is(err, pgstore.ErrBadNamespace) || errors.Is(err, pgstore.ErrBadURL) {
		t.Fatalf("a bad namespace: %v", err)
	}
}

// keyValue is the database at url as a key=value connection string.
func keyValue(t testing.TB, url string) string {
	t.Helper()
	c, err := pgconn.ParseConfig(url)
	must(t, err)
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s", c.Host, c.Port, c.User, c.Database)
}

// Regression: a URL whose password holds an "@" that is not
// percent-encoded was cut by pgx at its first "@", the rest taken for the
// host name, and the failed lookup ("lookup ret123@127.0.0.1") showed
// part of the password, reported as the database being unavailable. It is
// refused as a bad URL, before anything is connected to, saying how to
// write it and repeating no part of the password.
func TestURLPasswordWithAtRefusedUnshown(t *testing.T) {
	for _, u := range []string{
		"postgres://pwuser:sek@ret123@127.0.0.1:55432/pwdb",
		"postgres://pwuser:sek@ret123@127.0.0.1:55432/pwdb?lease_ttl=2s",
	} {
		_, err := pgstore.Open(context.Background(), u)
		if !errors.Is(err, pgstore.ErrBadURL) || errors.Is(err, pgstore.ErrUnavailable) || !strings.Contains(err.Error(), "%40") {
			t.Fatalf("%s: %v; want a bad URL saying to write %%40", pgstore.Redact(u), err)
		}
		for _, part := range []string{"sek", "ret123"} {
			if strings.Contains(err.Error(), part) {
				t.Fatalf("the error repeats %q of the password: %v", part, err)
			}
		}
	}
}
