package pgstore_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// replyDropper is a TCP proxy to a database's unix socket that, once
// armed, lets the next COMMIT reach the server, waits for the server's
// answer, and then closes the client's connection without passing it on:
// the transaction is committed, and the client is not told so.
type replyDropper struct {
	url     string // the database's URL through the proxy
	armed   atomic.Bool
	dropped atomic.Int32
	// refuse closes every connection as it comes; gone sets it as the
	// answer is dropped, as if the database went away then.
	refuse, gone atomic.Bool
}

func newReplyDropper(t *testing.T, dbURL string) *replyDropper {
	t.Helper()
	u, err := url.Parse(dbURL)
	must(t, err)
	port := u.Query().Get("port")
	if port == "" {
		port = "5432"
	}
	sock := filepath.Join(u.Query().Get("host"), ".s.PGSQL."+port)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	p := &replyDropper{}
	pu := *u
	pu.Host = ln.Addr().String()
	pu.RawQuery = "sslmode=disable"
	p.url = pu.String()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if p.refuse.Load() {
				c.Close()
				continue
			}
			srv, err := net.Dial("unix", sock)
			if err != nil {
				c.Close()
				continue
			}
			wg.Add(2)
			var dropNext atomic.Bool
			go func() { // client to server
				defer wg.Done()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 && bytes.Contains(buf[:n], []byte("commit\x00")) && p.armed.CompareAndSwap(true, false) {
						dropNext.Store(true)
					}
					if n > 0 {
						if _, werr := srv.Write(buf[:n]); werr != nil {
							err = werr
						}
					}
					if err != nil {
						srv.Close()
						return
					}
				}
			}()
			go func() { // server to client
				defer wg.Done()
				buf := make([]byte, 64<<10)
				for {
					n, err := srv.Read(buf)
					if n > 0 && dropNext.Load() {
						p.refuse.Store(p.gone.Load())
						p.dropped.Add(1)
						c.Close()
						srv.Close()
						return
					}
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							err = werr
						}
					}
					if err != nil {
						if !errors.Is(err, io.EOF) {
							srv.Close()
						}
						c.Close()
						return
					}
				}
			}()
		}
	}()
	return p
}

// Regression: a take of a lease whose COMMIT the server ran but whose
// answer was lost (the connection dropped after the commit) failed as the
// database unavailable, leaving the lease taken in the name of the run
// that was told it had not taken it, and refused, as held by a process, a
// take of the agent again by that run until it expired. The take is sent
// again, finds the lease it committed, and holds it: the epoch raised
// once, the agent written under it, and released at the end.
func TestLeaseTakeWhoseCommitAnswerWasLost(t *testing.T) {
	url := sharedURL(t)
	committedAgent(t, open(t, url), "a1", 1)
	var before int64
	query(t, url, `SELECT epoch FROM cairn_leases WHERE agent = 'a1'`, nil, &before)

	p := newReplyDropper(t, url)
	s := open(t, p.url)
	p.armed.Store(true)
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-b"))
	if p.dropped.Load() != 1 {
		t.Fatalf("the proxy dropped %d answers to a COMMIT, want 1 (the take's)", p.dropped.Load())
	}
	if err != nil {
		t.Fatalf("a take whose COMMIT's answer was lost: %v", err)
	}
	var epoch int64
	var run string
	var released bool
	query(t, url, `SELECT epoch, holder_run, released FROM cairn_leases WHERE agent = 'a1'`, nil, &epoch, &run, &released)
	if epoch != before+1 || run != "run-b" || released {
		t.Fatalf("lease at epoch %d (was %d), held by run %q, released %v; want epoch %d held by run-b",
			epoch, before, run, released, before+1)
	}
	_, log, err := s.Open("a1")
	must(t, err)
	commitRound(t, log, 2)
	must(t, lock.Unlock())
	query(t, url, `SELECT epoch, holder_run, released FROM cairn_leases WHERE agent = 'a1'`, nil, &epoch, &run, &released)
	if !released || epoch != before+1 {
		t.Fatalf("after Unlock: epoch %d, released %v", epoch, released)
	}
	if rec, err := open(t, url).Read("a1"); err != nil || rec.State.Round != 2 {
		t.Fatalf("agent a1 after its round 2 under the lease: %v", err)
	}
}

// A take whose COMMIT's answer was lost, the database then gone past the
// store's timeout, fails as the database unavailable, saying that the
// lease may have been taken, until when, and what takes it; the same
// run's next take, the database back, holds the lease the lost one took
// rather than refusing the agent as held by its own process.
func TestLeaseTakeWhoseCommitAnswerWasLostDatabaseGone(t *testing.T) {
	url := sharedURL(t)
	committedAgent(t, open(t, url), "a1", 1)
	var before int64
	query(t, url, `SELECT epoch FROM cairn_leases WHERE agent = 'a1'`, nil, &before)

	p := newReplyDropper(t, url)
	s := open(t, p.url, pgstore.WithTimeout(time.Second))
	p.gone.Store(true)
	p.armed.Store(true)
	h := checkpoint.ThisProcess("run-b")
	_, err := s.Lock("a1", h)
	if p.dropped.Load() != 1 {
		t.Fatalf("the proxy dropped %d answers to a COMMIT, want 1 (the take's)", p.dropped.Load())
	}
	if !errors.Is(err, pgstore.ErrUnavailable) {
		t.Fatalf("a take whose COMMIT's answer was lost, the database gone: %v, want ErrUnavailable", err)
	}
	for _, want := range []string{"may have been committed", "could not be released", "until it expires", "cairn resume"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}

	p.refuse.Store(false)
	lock, err := s.Lock("a1", h)
	if err != nil {
		t.Fatalf("the same run's take, the database back: %v", err)
	}
	defer lock.Unlock()
	var epoch int64
	query(t, url, `SELECT epoch FROM cairn_leases WHERE agent = 'a1'`, nil, &epoch)
	if epoch != before+1 {
		t.Fatalf("lease at epoch %d, was %d: want it raised once", epoch, before)
	}
	_, log, err := s.Open("a1")
	must(t, err)
	commitRound(t, log, 2)
}
