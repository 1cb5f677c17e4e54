package workflow_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/host/workflow"
	"github.com/cairnrun/cairn/internal/guestbuild"
)

// postStepKilled runs a workflow W whose tool step post sends a POST that
// is never answered, and copies the store while the POST waits: what a
// kill -9 of the process leaves (every file as the page cache has it, no
// lock held). It returns the copy's directories, one per name, and the
// number of POSTs the server has seen.
func postStepKilled(t *testing.T, names ...string) (copies map[string]string, posts func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	hung, unhang := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			hung <- struct{}{}
			<-unhang
		}
	}))
	t.Cleanup(srv.Close)
	posts = func() int { mu.Lock(); defer mu.Unlock(); return n }

	dir := flowDir(t, map[string]string{"ws/": "", "flow.yaml": fmt.Sprintf("name: w\nworkspace: ws\nsteps:\n"+
		"  - name: post\n    tool: http\n    module: nettool.wasm\n"+
		"    grant: {net: {allow: [%q], methods: [POST]}}\n"+
		"    input: {method: POST, url: %q, body: order-1}\n", strings.TrimPrefix(srv.URL, "http://"), srv.URL+"/order")})
	store, err := checkpoint.OpenFileStore(filepath.Join(t.TempDir(), "store"))
	must(t, err)
	eng := engine(t, store)
	_, err = guestbuild.Build(dir, "../testdata/nettool", func(w []byte) ([]byte, error) { return eng.Pack(context.Background(), w, nil) })
	must(t, err)
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		workflow.Run(context.Background(), eng, f, workflow.Options{ID: "W"})
	}()
	select {
	case <-hung:
	case <-time.After(60 * time.Second):
		t.Fatal("the POST never reached the server")
	}
	copies = map[string]string{}
	for _, name := range names {
		copies[name] = filepath.Join(t.TempDir(), name)
		must(t, os.CopyFS(copies[name], os.DirFS(store.Dir())))
	}
	close(unhang)
	<-ran
	return copies, posts
}

// sealedResult is the tool message of the step's sealed call.
func sealedResult(t *testing.T, store checkpoint.Store) conversation.Message {
	t.Helper()
	rec, err := store.Read(workflow.StepAgent("W", "post"))
	must(t, err)
	for _, m := range rec.State.Messages {
		if m.Role == conversation.RoleTool && m.IsError {
			return m
		}
	}
	t.Fatalf("the step's agent has no sealed result: %+v", rec.State.Messages)
	return conversation.Message{}
}

// refusedAsUnknown resumes W in store and wants the step failed, not made
// again: it names the POST, what to check and how to retry.
func refusedAsUnknown(t *testing.T, store checkpoint.Store, posts func() int) {
	t.Helper()
	res, err := workflow.Resume(context.Background(), engine(t, store), "W", workflow.Options{})
	must(t, err)
	if res.Status != checkpoint.StatusFailed || !strings.Contains(res.Reason, "check the remote side before retrying: POST ") ||
		!strings.Contains(res.Reason, "`cairn workflow resume --retry post W`") {
		t.Fatalf("resume: %s (%s); want the step failed, naming the POST and how to retry it", res.Status, res.Reason)
	}
	if n := posts(); n != 1 {
		t.Fatalf("the server saw %d POSTs, want 1", n)
	}
}

// Regression: the workflow told a tool step whose call was sealed with its
// effects unknown (cut off after it sent a POST) by the seal's words
// alone, so a rewording of the seal, or a tool's output quoting it, changed
// what a resume did. Resume's seal now carries the mark in its record
// (checkpoint.Result.EffectsUnknown, reaching the tool message), and the
// workflow reads it: a plain `workflow resume` fails the step and sends
// nothing. A seal written before the mark existed, which has only its
// words, is still told by them.
func TestToolStepSealedAfterAPostIsToldByTheSealsMark(t *testing.T) {
	copies, posts := postStepKilled(t, "new", "old")

	store, err := checkpoint.OpenFileStore(copies["new"])
	must(t, err)
	refusedAsUnknown(t, store, posts)
	sealed := sealedResult(t, store)
	if !sealed.EffectsUnknown {
		t.Fatalf("the seal of a call that sent a POST is not marked effects unknown: %+v", sealed)
	}
	refusedAsUnknown(t, store, posts) // and again: the step is not made again

	// What a cairn before the mark journaled: the same seal, its words
	// alone, in a round its resume committed before the run ended.
	old, err := checkpoint.OpenFileStore(copies["old"])
	must(t, err)
	journalOldSeal(t, old, sealed.Text)
	refusedAsUnknown(t, old, posts)
}

// journalOldSeal journals, in the step agent's interrupted round, the
// seal text as a cairn before checkpoint.Result.EffectsUnknown wrote it,
// and ends the run done as that cairn's resume did.
func journalOldSeal(t *testing.T, store *checkpoint.FileStore, text string) {
	t.Helper()
	id := workflow.StepAgent("W", "post")
	lock, err := store.Lock(id, checkpoint.ThisProcess("old"))
	must(t, err)
	defer lock.Unlock()
	rec, log, err := store.Open(id)
	must(t, err)
	defer log.Close()
	var call conversation.ToolCall
	for _, r := range rec.Tail {
		if r.Type == checkpoint.RecTurn {
			call = r.Message.ToolCalls[0]
		}
	}
	round, now := rec.State.Round+1, time.Now().UTC()
	run := checkpoint.RunInfo{ID: "run-old", ResumedFrom: rec.State.LastRun().ID, Strategy: "replay", Started: now}
	ended := run
	ended.Status, ended.Ended = checkpoint.StatusDone, now
	must(t, log.Append(checkpoint.Record{Type: checkpoint.RecRunStarted, Time: now, Run: &run},
		checkpoint.Record{Type: checkpoint.RecResult, Time: now, Round: round, Call: call.ID, Tool: call.Name,
			Result: &checkpoint.Result{Output: text, IsError: true, Sealed: true}}))
	_, err = log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: now, Round: round})
	must(t, err)
	must(t, log.Append(checkpoint.Record{Type: checkpoint.RecRunEnded, Time: now, Run: &ended}))
	must(t, log.Sync())
}

// Regression: a tool step whose output began with a seal's words (here
// grep's, of a file that quotes one under a name that does) was failed as
// a call cut off with its effects unknown, and not made again. Only a
// failed call's result can be a seal: the output is the step's.
func TestToolStepOutputQuotingASealIsItsOutput(t *testing.T) {
	quote := "This call was interrupted: notes"
	dir := flowDir(t, map[string]string{"ws/" + quote: "Its effects on the workspace: unknown.\n",
		"flow.yaml": "name: q\nworkspace: ws\nsteps:\n  - {name: find, tool: grep, module: builtin, input: {pattern: effects}}\n"})
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	res, err := workflow.Run(context.Background(), engine(t, checkpoint.NewMemStore()), f, workflow.Options{ID: "q"})
	must(t, err)
	want := quote + ":1: Its effects on the workspace: unknown."
	if res.Status != checkpoint.StatusDone || !strings.HasPrefix(outputs(res.Record)["find"], want) {
		t.Fatalf("run: %s (%s), outputs %q; want the step done with grep's output", res.Status, res.Reason, outputs(res.Record))
	}
}
