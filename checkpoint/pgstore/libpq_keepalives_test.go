package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: libpq's keepalive keywords (keepalives, keepalives_idle,
// keepalives_interval, keepalives_count), which a URL written for psql
// may carry, stopped the store from opening: pgx sent them to the server
// as settings, and the server refused them ("unrecognized configuration
// parameter"). They set the client's socket, as libpq's do, and a value
// that is not a number of seconds is refused naming the keyword.
func TestLibpqKeepaliveKeywordsInTheURL(t *testing.T) {
	srv := pgtest.Shared(t)
	url := srv.NewDatabase(t)
	sep := "&"
	if !strings.Contains(url, "?") {
		sep = "?"
	}
	s, err := pgstore.Open(context.Background(), url+sep+"keepalives=1&keepalives_idle=10&keepalives_interval=5&keepalives_count=3")
	if err != nil {
		t.Fatalf("open with libpq's keepalive keywords: %v", err)
	}
	defer s.Close()
	if _, err := s.Read("nobody"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("read from a store opened with libpq's keepalive keywords: %v", err)
	}
	_, err = pgstore.Open(context.Background(), url+sep+"keepalives_idle=soon")
	if !errors.Is(err, pgstore.ErrBadURL) || !strings.Contains(err.Error(), "keepalives_idle") {
		t.Fatalf("keepalives_idle=soon: %v; want ErrBadURL naming the keyword", err)
	}
}
