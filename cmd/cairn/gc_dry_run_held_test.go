package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: gc --dry-run took each agent's lock, as gc does, to learn
// whether a process held it, writing itself into the lock file as the
// holder of an agent no process ran (a run that started then waited for
// it, or was refused). A dry run asks whether the flock is held, without
// taking it, and says what gc would do: an agent a process holds is
// skipped, and what of it gc would remove (here, what an older cairn's
// killed fill left beside its workspace) is named nowhere.
func TestGCDryRunSkipsAnAgentAProcessHoldsAndTakesNoLock(t *testing.T) {
	t.Parallel()
	agentFile, store := scriptAgent(t, "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns: [{text: hi}]\n")
	if code, _, errOut := cairnProcess(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "v", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	fill := filepath.Join(filepath.Dir(agentFile), ".cairn-fill-v-workspace")
	must(t, os.MkdirAll(filepath.Join(fill, "sub"), 0o755))

	// This test's process holds the agent, as a run does; gc runs in
	// processes of its own.
	s, err := checkpoint.OpenFileStore(store)
	must(t, err)
	lock, err := s.Lock("v", checkpoint.ThisProcess("run-holder"))
	must(t, err)
	code, dry, errOut := cairnProcess(t, "gc", "--store", store, "--dry-run")
	if code != exitDone || !strings.Contains(dry, "skipped agent v: a process runs it") || strings.Contains(dry, fill) {
		t.Fatalf("gc --dry-run of an agent a process holds: exit %d %q %s; want it skipped, %s named nowhere", code, dry, errOut, fill)
	}
	code, real, errOut := cairnProcess(t, "gc", "--store", store)
	if code != exitDone || !exists(fill) {
		t.Fatalf("gc of an agent a process holds: exit %d %q %s; want %s left", code, real, errOut, fill)
	}
	if said := strings.ReplaceAll(dry, "would remove", "removed"); said != real {
		t.Fatalf("gc --dry-run said\n%s\nand gc did\n%s", dry, real)
	}
	must(t, lock.Unlock())

	// No process holds it: the dry run leaves its lock file as it was,
	// its time too, which a holder written in and cleared would change.
	lockFile := filepath.Join(store, "agents", "v", "lock")
	long := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	must(t, os.Chtimes(lockFile, long, long))
	code, dry, errOut = cairnProcess(t, "gc", "--store", store, "--dry-run")
	if code != exitDone || strings.Contains(dry, "skipped") || !strings.Contains(dry, "would remove "+fill+",") {
		t.Fatalf("gc --dry-run of an agent no process holds: exit %d %q %s; want it to say it would remove %s", code, dry, errOut, fill)
	}
	if fi, err := os.Stat(lockFile); err != nil || !fi.ModTime().Equal(long) {
		t.Fatalf("gc --dry-run wrote the agent's lock file (taking the lock): %v, %v", fi.ModTime(), err)
	}
	if !exists(fill) {
		t.Fatalf("gc --dry-run removed %s", fill)
	}
}
