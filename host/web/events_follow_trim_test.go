package web

import (
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// lockGated is a file store whose look at a lock, which a follower takes
// each time it has read the history to its end, waits for a channel the
// test hands it, when the test has one waiting, to be closed.
type lockGated struct {
	*checkpoint.FileStore
	gate chan chan struct{}
}

func (s lockGated) Locked(id string) (bool, error) {
	select {
	case wait := <-s.gate:
		<-wait
	default:
	}
	return s.FileStore.Locked(id)
}

// Regression: the stream numbered a trim's warning as line 1 only; a
// follower whose unread lines `cairn gc --keep-rounds` removed, which is
// given the warning in their place, numbered it and the lines kept after
// the lines it had sent, not as the history numbers them, so that a
// reconnection's Last-Event-ID named other lines than it had.
func TestStreamAcrossATrimNumbersTheLinesAsTheHistoryDoes(t *testing.T) {
	fs, err := checkpoint.OpenFileStore(t.TempDir())
	must(t, err)
	store := lockGated{FileStore: fs, gate: make(chan chan struct{})}
	f := newFixtureOn(t, Config{Loopback: true}, store)

	lock, err := fs.Lock("a", checkpoint.ThisProcess("r1"))
	must(t, err)
	log, err := fs.Create("a", checkpoint.NewState("a", checkpoint.Definition{Workspace: "/ws"}, checkpoint.Labels{}, time.Now()))
	must(t, err)
	lines := 0
	write := func(format string, args ...any) {
		w, err := fs.Events("a")
		must(t, err)
		lines++
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(lines) * time.Millisecond).Format(time.RFC3339Nano)
		_, err = fmt.Fprintf(w, `{"time":%q,"agent":"a","run":"r1",`+format+"}\n", append([]any{at}, args...)...)
		must(t, err)
		must(t, w.Close())
	}
	round := func(n int) {
		turn := conversation.Message{Role: conversation.RoleAssistant, Text: "turn"}
		must(t, log.Append(checkpoint.Record{Type: checkpoint.RecTurn, Time: time.Now(), Round: n, Message: &turn}))
		_, err := log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: time.Now(), Round: n})
		must(t, err)
		for _, typ := range []string{"model_turn", "tool_end", "round_end"} {
			write(`"type":%q,"round":%d`, typ, n)
		}
	}
	write(`"type":"run_start"`)
	for n := 1; n <= 5; n++ {
		round(n)
	}
	resp := f.do("/api/agents/a/events?follow=1", nil, "")
	wait := make(chan struct{})
	store.gate <- wait // the follower has sent every line and looks at the lock
	for n := 6; n <= 11; n++ {
		round(n)
	}
	write(`"type":"run_end"`)
	must(t, log.Close())
	must(t, lock.Unlock())
	got, err := fs.Collect(checkpoint.Retention{Rounds: 3})
	if err != nil || len(got.Trimmed) == 0 {
		t.Fatalf("collect: %+v, %v", got, err)
	}
	close(wait)

	_, ids := sse(t, resp)
	rc, err := fs.ReadEvents("a")
	must(t, err)
	history, _ := io.ReadAll(rc)
	rc.Close()
	var want []string
	for i := 1; i <= 16; i++ {
		want = append(want, strconv.Itoa(i))
	}
	for i := 25; i <= lines; i++ { // the warning is line 25, the lines it stands for removed
		want = append(want, strconv.Itoa(i))
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("the stream's ids are\n%v, want\n%v; the history is\n%s", ids, want, history)
	}
}
