package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: gc --dry-run said it would remove what the node kept of an
// agent the database no longer has (its kept changes, its staging) while
// another process held the agent's lease, which gc leaves, skipping the
// agent. A dry run asks whether the lease is held, without taking it, and
// says what gc says: the agent skipped, its directories named nowhere.
func TestPostgreSQLGCDryRunSkipsAnAgentWhoseLeaseAProcessHolds(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).NewDatabase(t)
	node, ws, kept := keptChangesAgent(t, url)
	pgExec(t, url, `DELETE FROM cairn_journal WHERE agent = 'w'; DELETE FROM cairn_past WHERE agent = 'w';
		DELETE FROM cairn_agents WHERE id = 'w'`)
	temp := filepath.Join(ws+"-tmp", fmt.Sprintf("cairn-staging-%d", os.Getuid()), filepath.Base(filepath.Dir(kept)), "w")
	if !exists(temp) || !exists(kept) {
		t.Fatalf("the node keeps no directory of the agent: %s %v, %s %v", temp, exists(temp), kept, exists(kept))
	}

	// This test's process holds the lease, as one that makes an agent of
	// that id again does; gc runs in processes of its own.
	s, err := pgstore.Open(context.Background(), url)
	must(t, err)
	defer s.Close()
	lock, err := s.Lock("w", checkpoint.ThisProcess("run-holder"))
	must(t, err)
	held := leaseOf(t, url, "w")
	code, dry, errOut := node("gc", "--store", url, "--dry-run")
	if code != exitDone || !strings.Contains(dry, "skipped agent w: a process runs it") || strings.Contains(dry, "kept of agent w") {
		t.Fatalf("gc --dry-run of a removed agent whose lease a process holds: exit %d %q %s; want it skipped, "+
			"none of its directories named", code, dry, errOut)
	}
	if now := leaseOf(t, url, "w"); now != held {
		t.Fatalf("gc --dry-run changed the lease: %+v, was %+v", now, held)
	}
	code, real, errOut := node("gc", "--store", url)
	if code != exitDone || !exists(temp) || !exists(kept) {
		t.Fatalf("gc of a removed agent whose lease a process holds: exit %d %q %s; want its directories kept", code, real, errOut)
	}
	if said := strings.ReplaceAll(dry, "would remove", "removed"); said != real {
		t.Fatalf("gc --dry-run said\n%s\nand gc did\n%s", dry, real)
	}
	must(t, lock.Unlock())

	code, dry, errOut = node("gc", "--store", url, "--dry-run")
	for _, dir := range []string{kept, temp} {
		if !strings.Contains(dry, "would remove "+dir+", what this node kept of agent w") {
			t.Errorf("gc --dry-run, the lease let go, does not say it would remove %s: exit %d %q %s", dir, code, dry, errOut)
		}
	}
	if strings.Contains(dry, "skipped") || !exists(temp) || !exists(kept) {
		t.Fatalf("gc --dry-run, the lease let go: %q; want nothing skipped, nothing removed", dry)
	}
}
