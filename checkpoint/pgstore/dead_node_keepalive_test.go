package pgstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a node that lost its power in the middle of a write left
// its session's server process holding the agent's lease row until the
// server's TCP keepalive gave it up, hours by the operating system's
// defaults, and no other node could take the agent meanwhile. Every
// session the store opens asks the server to probe its connection soon
// and give it up within about the lease's time to live; a URL that sets
// a value keeps it.
func TestDeadNodeSessionEndsWithinTheLease(t *testing.T) {
	srv := pgtest.StartTCP(t)
	url := srv.TCPURL(t, srv.NewDatabase(t))
	s, err := pgstore.Open(context.Background(), url, pgstore.WithLeaseTTL(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, want := range map[string]string{
		"tcp_keepalives_idle":     "10",
		"tcp_keepalives_interval": "5",
		"tcp_keepalives_count":    "3",
		"tcp_user_timeout":        "30000",
	} {
		got, err := pgstore.Show(s, name)
		if err != nil {
			t.Fatalf("show %s: %v", name, err)
		}
		if got != want {
			t.Errorf("%s is %s in the store's session, want %s", name, got, want)
		}
	}

	sep := "&"
	if !strings.Contains(url, "?") {
		sep = "?"
	}
	s2, err := pgstore.Open(context.Background(), url+sep+"tcp_keepalives_idle=120")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got, err := pgstore.Show(s2, "tcp_keepalives_idle"); err != nil || got != "120" {
		t.Errorf("tcp_keepalives_idle=120 in the URL: the session has %q (%v), want 120", got, err)
	}
}
