package pgstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: Exists, which has no error to give, said false of an agent
// the database holds whenever the database did not answer — as it
// restarted — and its callers take false for an agent that is not there
// (a delegation of a resumed round tells the model its sub-agent is
// gone; a resume says the agent does not exist). Exists
// now asks again on a new connection through a restart, as writes do,
// and when the database does not answer within the store's timeout it
// says true, so that the caller's read of the agent says the database is
// unavailable rather than that the agent is missing.
func TestExistsIsNotFalseForADatabaseDown(t *testing.T) {
	if testing.Short() {
		t.Skip("stops and starts a server of its own")
	}
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	s := open(t, url, pgstore.WithTimeout(20*time.Second))
	committedAgent(t, s, "a1", 1)

	srv.Stop(t)
	done := make(chan bool, 1)
	go func() { done <- s.Exists("a1") }()
	time.Sleep(time.Second)
	srv.Start(t)
	if !<-done {
		t.Fatal("Exists said false of an agent the database holds while it restarted")
	}
	if s.Exists("nobody") {
		t.Fatal("Exists said true of an agent the database does not hold")
	}

	short := open(t, url, pgstore.WithTimeout(time.Second))
	srv.Stop(t)
	if !short.Exists("a1") {
		t.Fatal("Exists said false of an agent with the database down past the timeout")
	}
	if _, err := short.Read("a1"); !errors.Is(err, pgstore.ErrUnavailable) {
		t.Fatalf("read with the database down: %v, want ErrUnavailable", err)
	}
	srv.Start(t)
}
