package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// gcMidRead is a file store that runs `cairn gc` as a process of its own
// just before the fork's blob read number at (counted from 1), as a gc
// started by someone else while the fork was reading would.
type gcMidRead struct {
	*checkpoint.FileStore
	t     *testing.T
	store string
	at    int
	args  []string

	mu    sync.Mutex
	reads int
	gcOut string
}

func (s *gcMidRead) Blob(digest string) ([]byte, error) {
	s.mu.Lock()
	s.reads++
	if s.reads == s.at {
		code, out, errOut := cairnProcess(s.t, append([]string{"gc", "--store", s.store}, s.args...)...)
		if code != exitDone {
			s.t.Errorf("gc: exit %d %s%s", code, out, errOut)
		}
		s.gcOut = out
	}
	s.mu.Unlock()
	return s.FileStore.Blob(digest)
}

// agedBlobs makes every blob of the store older than gc's grace, as the
// blobs of an agent that ran a while ago are.
func agedBlobs(t *testing.T, store string) {
	t.Helper()
	dir := filepath.Join(store, "blobs", "sha256")
	entries, err := os.ReadDir(dir)
	must(t, err)
	old := time.Now().Add(-2 * time.Hour)
	for _, e := range entries {
		must(t, os.Chtimes(filepath.Join(dir, e.Name()), old, old))
	}
}

// A fork at a past round reads the agent's pasts without its lock, then
// the blobs they name; `cairn gc --keep-rounds` run meanwhile replaces the
// pasts and removes the blobs only the rounds it removed used. The fork
// then either forks the round, when gc kept it, or refuses it as one gc
// removed, naming the oldest round to fork at, with exit 2: never "blob
// not found" for a round that was there when it was asked for. Nothing
// of the refused fork is left, and the agent forks at a kept round after.
func TestForkAtARoundGCKeepRoundsTrimsMeanwhileSaysItWasRemoved(t *testing.T) {
	t.Parallel()
	store, agentFile := gcRoundsAgent(t)
	// A second run keeps a whole workspace of its own at round 26: the
	// first run's, at round 0, is then named by no kept round once gc
	// trims, and is removed.
	if code, _, errOut := cairnProcess(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "w", "-f", agentFile, "more"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}

	fork := func(t *testing.T, round, at int, keep string) (*host.Forked, string, *gcMidRead, error) {
		agedBlobs(t, store)
		fs, err := checkpoint.OpenFileStore(store)
		must(t, err)
		s := &gcMidRead{FileStore: fs, t: t, store: store, at: at, args: []string{"--keep-rounds", keep}}
		eng, err := host.NewEngine(context.Background(), host.Config{Store: s, CacheDir: cacheForTests(t)})
		must(t, err)
		defer eng.Close(context.Background())
		ws := filepath.Join(t.TempDir(), "ws")
		st, err := forkAt(context.Background(), eng, host.ForkOptions{ID: "w", Past: true, AtRound: round, Workspace: ws})
		return st, ws, s, err
	}

	t.Run("removed", func(t *testing.T) {
		// Round 10's manifest is read (read 1), then its files: gc runs
		// before the second of them is read, keeping rounds 18 on.
		_, ws, s, err := fork(t, 10, 3, "10")
		if !strings.Contains(s.gcOut, "removed the rounds before 18") {
			t.Fatalf("gc did not trim: %s", s.gcOut)
		}
		if err == nil || !strings.Contains(err.Error(), "round 10") || !strings.Contains(err.Error(), "`cairn gc --keep-rounds` removed") ||
			!strings.Contains(err.Error(), "the oldest round to fork at is 17") || strings.Contains(err.Error(), "blob") {
			t.Fatalf("fork at round 10 while gc removed it: %v", err)
		}
		if code := exitWith(forkError(err), io.Discard); code != exitUsage {
			t.Fatalf("exit %d for %v", code, err)
		}
		if _, err := os.Stat(ws); !os.IsNotExist(err) {
			t.Fatalf("the refused fork left its workspace: %v", err)
		}
	})
	t.Run("kept", func(t *testing.T) {
		// Round 22 is built from the first run's whole workspace, whose
		// manifest gc removes just before the fork reads it; gc keeps
		// round 22 on a whole workspace of its own.
		st, ws, s, err := fork(t, 22, 1, "5")
		if !strings.Contains(s.gcOut, "removed the rounds before 23") {
			t.Fatalf("gc did not trim: %s", s.gcOut)
		}
		if err != nil {
			t.Fatalf("fork at round 22, which gc kept: %v", err)
		}
		if st.Round != 22 {
			t.Fatalf("forked round %d", st.Round)
		}
		wantWorkspaceAt(t, ws, 22)
	})

	// The refused fork left no agent, the kept one is there, and the
	// agent is whole: it forks at its oldest round kept.
	entries, err := os.ReadDir(filepath.Join(store, "agents"))
	must(t, err)
	if len(entries) != 2 {
		t.Fatalf("agents after the forks: %v", entries)
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if code, _, errOut := cairnProcess(t, "fork", "--store", store, "--at-round", "22", "--workspace", ws, "w"); code != exitDone {
		t.Fatalf("fork at round 22: exit %d %s", code, errOut)
	}
	wantWorkspaceAt(t, ws, 22)
}
