package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// keptChangesAgent runs, as a node of its own (keptNode), an agent w of
// the database url whose one round writes notes.txt, and returns the
// node, its workspace and the agent's directory of kept changes in the
// node's state directory.
func keptChangesAgent(t *testing.T, url string) (node func(args ...string) (int, string, string), ws, kept string) {
	t.Helper()
	agentFile, _ := scriptAgent(t, `name: w
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
`, "turns:\n  - tool_calls: [{name: write_file, input: {path: notes.txt, content: 'after'}}]\n  - text: done\n")
	ws = filepath.Join(filepath.Dir(agentFile), "workspace")
	must(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("before"), 0o644))
	node = keptNode(t, ws)
	if code, _, errOut := node("run", "--store", url, "--cache", cacheForTests(t), "--id", "w", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	dirs, err := filepath.Glob(filepath.Join(ws+"-state", "cairn", "agents", "*", "w"))
	if err != nil || len(dirs) != 1 || !exists(filepath.Join(dirs[0], "changes")) {
		t.Fatalf("the state directory keeps the agent's changes in %q, %v; want one directory", dirs, err)
	}
	return node, ws, dirs[0]
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Regression: the kept changes an older cairn kept in the temporary
// directory stayed there for good, and the agent's later rounds were
// kept there too, since the state directory kept none of the agent's.
// gc moves them to the state directory, under the agent's lock, and says
// so; undo then reads them there, once the temporary directory is emptied.
func TestPostgreSQLGCMovesKeptChangesAnOlderCairnKeptInTheTempDirectory(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).NewDatabase(t)
	node, ws, kept := keptChangesAgent(t, url)
	// Where an older cairn kept them: beside the staging.
	older := filepath.Join(ws+"-tmp", fmt.Sprintf("cairn-staging-%d", os.Getuid()), filepath.Base(filepath.Dir(kept)), "w")
	must(t, os.MkdirAll(older, 0o700))
	must(t, os.Rename(filepath.Join(kept, "changes"), filepath.Join(older, "changes")))

	code, out, errOut := node("gc", "--store", url, "--dry-run")
	if code != exitDone || !strings.Contains(out, "would move "+filepath.Join(older, "changes")+" to "+filepath.Join(kept, "changes")) {
		t.Fatalf("gc --dry-run: exit %d %q %s; want it to say it would move the kept changes", code, out, errOut)
	}
	if !exists(filepath.Join(older, "changes")) || exists(filepath.Join(kept, "changes")) {
		t.Fatal("gc --dry-run moved the kept changes")
	}
	code, out, errOut = node("gc", "--store", url)
	if code != exitDone || !strings.Contains(out, "moved "+filepath.Join(older, "changes")+" to "+filepath.Join(kept, "changes")) ||
		!strings.Contains(out, "agent w") {
		t.Fatalf("gc: exit %d %q %s; want it to say it moved the kept changes of agent w", code, out, errOut)
	}
	if exists(filepath.Join(older, "changes")) || !exists(filepath.Join(kept, "changes")) {
		t.Fatalf("after gc: kept changes in the temporary directory %v, in the state directory %v; want them moved",
			exists(filepath.Join(older, "changes")), exists(filepath.Join(kept, "changes")))
	}
	// A reboot, or a cleaner of the temporary directory.
	must(t, os.RemoveAll(ws+"-tmp"))
	must(t, os.Mkdir(ws+"-tmp", 0o700))
	if code, out, errOut := node("undo", "--store", url, "w"); code != exitDone || !strings.Contains(out, "undid round 1") {
		t.Fatalf("undo of the kept changes gc moved: exit %d %q %s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(b) != "before" {
		t.Fatalf("notes.txt after undo: %q, %v; want %q", b, err, "before")
	}
	if code, out, errOut := node("gc", "--store", url); code != exitDone || strings.Contains(out, "kept") {
		t.Fatalf("gc again: exit %d %q %s; want nothing of the kept changes touched", code, out, errOut)
	}
}

// Regression: what a node kept of an agent (its kept changes, its
// staging) stayed on it for good once the agent was removed from the
// database other than by that node (another node's `cairn rm`, SQL). gc
// removes it, under the agent's lock, once the store has no such agent,
// and says so; an agent the store has keeps it, and one a process holds
// is left.
func TestPostgreSQLGCRemovesWhatTheNodeKeptOfAnAgentRemovedElsewhere(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).NewDatabase(t)
	node, ws, kept := keptChangesAgent(t, url)
	if code, out, errOut := node("gc", "--store", url); code != exitDone || strings.Contains(out, "kept") || !exists(kept) {
		t.Fatalf("gc of an agent the store has: exit %d %q %s; want what the node keeps of it kept", code, out, errOut)
	}
	// Removed by SQL, as another node's cairn rm removes its rows.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `DELETE FROM cairn_journal WHERE agent = 'w'; DELETE FROM cairn_past WHERE agent = 'w';
		DELETE FROM cairn_agents WHERE id = 'w'`)
	must(t, err)
	temp := filepath.Join(ws+"-tmp", fmt.Sprintf("cairn-staging-%d", os.Getuid()), filepath.Base(filepath.Dir(kept)), "w")
	if !exists(temp) {
		t.Fatalf("the node keeps no directory of the agent in the temporary directory, %s", temp)
	}

	// A process holds its lease (makes an agent of that id): left.
	tx, err := conn.Begin(ctx)
	must(t, err)
	_, err = tx.Exec(ctx, `UPDATE cairn_leases SET released = false, expires = now() + interval '1 hour',
		holder_host = 'node-b', holder_pid = 4242 WHERE agent = 'w'`)
	must(t, err)
	must(t, tx.Commit(ctx))
	if code, out, errOut := node("gc", "--store", url); code != exitDone || !strings.Contains(out, "skipped agent w") || !exists(kept) {
		t.Fatalf("gc of a removed agent whose lease a process holds: exit %d %q %s; want it skipped, its directories kept", code, out, errOut)
	}
	_, err = conn.Exec(ctx, `UPDATE cairn_leases SET released = true WHERE agent = 'w'`)
	must(t, err)

	code, out, errOut := node("gc", "--store", url)
	for _, dir := range []string{kept, temp} {
		if !strings.Contains(out, "removed "+dir+", what this node kept of agent w") {
			t.Errorf("gc of a removed agent does not say it removed %s: exit %d %q %s", dir, code, out, errOut)
		}
		if exists(dir) {
			t.Errorf("%s is left after gc, its agent removed", dir)
		}
	}
	if code != exitDone {
		t.Fatalf("gc: exit %d: %s", code, errOut)
	}
}
