package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// A server the helper starts answers on its database, and after a restart.
func TestServerAnswersAndRestarts(t *testing.T) {
	s := Start(t)
	u := s.NewDatabase(t)
	query := func() int {
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var n int
		if err := conn.QueryRow(context.Background(), "SELECT 41 + 1").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := query(); n != 42 {
		t.Fatalf("got %d", n)
	}
	s.Restart(t)
	if n := query(); n != 42 {
		t.Fatalf("after restart: got %d", n)
	}
}
