package pgstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// childEnv names the database a child process of the test locks an agent
// in; the child says "won" or "locked PID", holds what it won until its
// stdin closes, then releases it.
const childEnv = "CAIRN_PGSTORE_TEST_CHILD"

func init() {
	if url := os.Getenv(childEnv); url != "" {
		os.Exit(child(url))
	}
}

func child(url string) int {
	s, err := pgstore.Open(context.Background(), url)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer s.Close()
	l, err := s.Lock("a1", checkpoint.ThisProcess("child-"+strconv.Itoa(os.Getpid())))
	var le *checkpoint.LockedError
	switch {
	case errors.As(err, &le):
		fmt.Println("locked", le.Holder.PID)
		return 0
	case err != nil:
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("won")
	io.Copy(io.Discard, os.Stdin)
	l.Unlock()
	return 0
}

type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	said  string
}

func startChild(t *testing.T, url string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+url)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	p := &proc{cmd: cmd, stdin: stdin}
	p.said, _ = bufio.NewReader(out).ReadString('\n')
	p.said = strings.TrimSpace(p.said)
	return p
}

// Two processes race for one agent: one wins, the other is told its pid.
// Killed with -9, the winner holds nothing: a process of this host that
// is gone is no holder, as with flock.
func TestTwoProcessesRace(t *testing.T) {
	url := newDatabaseWithSchema(t)
	a, b := make(chan *proc), make(chan *proc)
	go func() { a <- startChild(t, url) }()
	go func() { b <- startChild(t, url) }()
	pa, pb := <-a, <-b
	winner, loser := pa, pb
	if pb.said == "won" {
		winner, loser = pb, pa
	}
	if winner.said != "won" || loser.said != fmt.Sprintf("locked %d", winner.cmd.Process.Pid) {
		t.Fatalf("the children said %q and %q", pa.said, pb.said)
	}
	s := open(t, url)
	if _, err := s.Lock("a1", checkpoint.ThisProcess("test")); !errors.Is(err, checkpoint.ErrLocked) {
		t.Fatalf("the test took the winner's lease: %v", err)
	}
	must(t, winner.cmd.Process.Kill())
	winner.cmd.Wait()
	l, err := s.Lock("a1", checkpoint.ThisProcess("test"))
	if err != nil {
		t.Fatalf("lock after the holder was killed: %v", err)
	}
	must(t, l.Unlock())
}

// newDatabaseWithSchema is a new database that a store has set up, so
// that children need not race to migrate it.
func newDatabaseWithSchema(t *testing.T) string {
	url := sharedURL(t)
	open(t, url).Close()
	return url
}
