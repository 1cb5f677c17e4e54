package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// pgTrials is how many trials each two-node test runs: CAIRN_PG_TRIALS,
// or 3.
func pgTrials(t *testing.T) int {
	if n, err := strconv.Atoi(os.Getenv("CAIRN_PG_TRIALS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// twoNodes is one database and an effects agent that node A runs in its
// workspace and node B resumes in another, empty at first.
type twoNodes struct {
	url, bin, cache, agent string
	full                   time.Duration // an uninterrupted run
	want                   map[string]string
}

func newTwoNodes(t *testing.T) *twoNodes {
	t.Helper()
	n := &twoNodes{url: pgtest.Shared(t).NewDatabase(t), bin: cairnBinary(t), cache: cacheForTests(t)}
	n.agent = filepath.Join(effectsAgent(t, n.bin), "agent.yaml")
	for i := range 2 { // the second, with the compile cache warm, is timed
		ws := filepath.Join(t.TempDir(), "clean")
		must(t, os.MkdirAll(ws, 0o755))
		start := time.Now()
		if out, err := n.run(ws, fmt.Sprintf("clean-%d", i), "").CombinedOutput(); err != nil {
			t.Fatalf("uninterrupted run: %v\n%s", err, out)
		}
		n.full, n.want = time.Since(start), workspaceFiles(t, ws)
	}
	return n
}

// run is node A's `cairn run` of agent id in ws, with params added to the
// store's URL.
func (n *twoNodes) run(ws, id, params string) *exec.Cmd {
	cmd := exec.Command(n.bin, "run", "--store", n.url+params, "--cache", n.cache, "--json", "--id", id,
		"--workspace", ws, "-f", n.agent)
	return onNode(cmd, ws)
}

// onNode gives a node's process a temporary directory and a state
// directory of its own, beside its workspace: where it stages its calls'
// changes and keeps them, as on another machine.
func onNode(cmd *exec.Cmd, ws string) *exec.Cmd {
	tmp := ws + "-tmp"
	os.MkdirAll(tmp, 0o700)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "XDG_STATE_HOME="+ws+"-state")
	return cmd
}

// resume is node B's `cairn resume` of agent id into ws.
func (n *twoNodes) resume(ws, id string, extra ...string) *exec.Cmd {
	args := append([]string{"resume", "--store", n.url, "--cache", n.cache, "--json", "--strategy", "replay",
		"--workspace", ws}, extra...)
	return onNode(exec.Command(n.bin, append(args, id)...), ws)
}

// finishOnB resumes the agent on node B, in a directory of its own that
// the store fills, and checks B's workspace: every line appended exactly
// once, as an uninterrupted run leaves it, but for calls resume sealed.
func (n *twoNodes) finishOnB(t *testing.T, id string, killed []byte, extra ...string) {
	t.Helper()
	wsB := filepath.Join(t.TempDir(), "node-b")
	res := n.resume(wsB, id, extra...)
	out, err := res.CombinedOutput()
	if code := res.ProcessState.ExitCode(); code == exitUsage && !bytes.Contains(killed, []byte("checkpoint_saved")) &&
		!bytes.Contains(out, []byte("agent_resumed")) {
		return // killed before the agent was stored
	} else if err != nil {
		t.Fatalf("resume on node B: %v\n%s", err, out)
	}
	sealed := map[string]bool{}
	for _, e := range jsonLines[keptEvent](out) {
		for _, s := range e.Sealed {
			sealed[s.Call] = true
		}
	}
	if len(sealed) > 0 {
		checkKeptWorkspace(t, wsB, 8, sealed)
	} else if got := workspaceFiles(t, wsB); !mapsEqual(got, n.want) {
		log1, _ := exec.Command(n.bin, "log", "--store", n.url, "--round", "1", id).CombinedOutput()
		t.Fatalf("node B's workspace is\n%v\nwant\n%v\nround 1:\n%s", got, n.want, log1)
	}
}

// Node A is killed with SIGKILL at a random moment; node B resumes the
// agent in its own, empty workspace directory, which the store fills as
// the workspace was at the boundary, and finishes it: every effect once.
// Half the trials resume as the lease allows (A's process is gone), half
// with --steal.
func TestTwoNodesKillDashNine(t *testing.T) {
	t.Parallel()
	n := newTwoNodes(t)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for trial := range pgTrials(t) {
		delay := time.Duration(rng.Int63n(int64(n.full)))
		var extra []string
		if trial%2 == 1 {
			extra = []string{"--steal"}
		}
		t.Run(fmt.Sprintf("kill-after-%s%s", delay.Round(time.Millisecond), strings.Join(extra, "")), func(t *testing.T) {
			id := fmt.Sprintf("k%d-%d", trial, time.Now().UnixNano())
			wsA := filepath.Join(t.TempDir(), "node-a")
			must(t, os.MkdirAll(wsA, 0o755))
			a := n.run(wsA, id, "")
			var out bytes.Buffer
			a.Stdout = &out
			must(t, a.Start())
			time.Sleep(delay)
			a.Process.Signal(syscall.SIGKILL)
			a.Wait()
			n.finishOnB(t, id, out.Bytes(), extra...)
		})
	}
}

// Node A is stopped with SIGSTOP past its lease; node B takes the agent
// over (after the lease expires, or at once with --steal) in its own
// workspace and finishes it; A, continued, is refused at its next commit
// and exits 5 with the fencing error, and nothing it did is in the agent
// or doubled in B's workspace.
func TestTwoNodesStoppedHolderIsFenced(t *testing.T) {
	t.Parallel()
	n := newTwoNodes(t)
	s, err := pgstore.Open(context.Background(), n.url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for trial := range pgTrials(t) {
		steal := trial%2 == 1
		t.Run(fmt.Sprintf("trial-%d-steal-%v", trial, steal), func(t *testing.T) {
			// SIGSTOP lands some time after the round's event is read, and
			// a loaded machine may let A finish first; then there is
			// nothing to take over, and the trial is made again.
			var a *exec.Cmd
			var errA bytes.Buffer
			var id, wsA string
			for attempt := 1; ; attempt++ {
				id = fmt.Sprintf("s%d-%d-%d", trial, attempt, time.Now().UnixNano())
				wsA = filepath.Join(t.TempDir(), "node-a")
				must(t, os.MkdirAll(wsA, 0o755))
				errA.Reset()
				a = n.run(wsA, id, "&lease_ttl=500ms")
				a.Stderr = &errA
				stopAfterRound(t, a, 1+trial%4)
				if sum, err := s.Summary(id); err != nil {
					t.Fatal(err)
				} else if sum.Status != checkpoint.StatusDone {
					break
				}
				if attempt == 5 {
					t.Fatal("node A finished before it could be stopped, five times")
				}
				a.Process.Kill()
				a.Wait()
			}
			var extra []string
			if steal {
				extra = []string{"--steal"}
			} else {
				waitForLeaseExpiry(t, s, id)
			}
			n.finishOnB(t, id, []byte("checkpoint_saved"), extra...)
			got := workspaceFiles(t, wsA)
			a.Process.Signal(syscall.SIGCONT)
			a.Wait()
			if code := a.ProcessState.ExitCode(); code != exitLocked || !strings.Contains(errA.String(), "taken over") {
				t.Fatalf("node A, continued: exit %d: %s", code, errA.String())
			}
			if after := workspaceFiles(t, wsA); !mapsEqual(after, got) {
				t.Fatalf("node A changed its workspace after the take-over:\n%v\nthen\n%v", got, after)
			}
			rec, err := s.Read(id)
			if err != nil || rec.State.Status != checkpoint.StatusDone || rec.State.Round != 9 {
				t.Fatalf("after A's refusal: %+v, %v", rec, err)
			}
		})
	}
}

// waitForLeaseExpiry waits until the store no longer counts the agent as
// held: the database's clock has passed the stopped holder's lease.
func waitForLeaseExpiry(t *testing.T, s *pgstore.Store, id string) {
	t.Helper()
	for {
		sum, err := s.Summary(id)
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Locked {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
