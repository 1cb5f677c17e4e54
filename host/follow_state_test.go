package host

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// A follower of a running agent asks at each poll whether the run goes on
// (checkpoint.LockQuery) and reads no state: it once took a Summary, a
// recovery of the whole state, every poll, so ten idle followers of a
// large running agent cost serve 1.25 s of CPU each 5 s. Here a follower
// of an agent of an 8 MiB state, held by a run that writes nothing,
// allocates less than 1 MiB in 1.5 s of polls, and ends once the run
// lets the agent go.
func TestFollowReadsNoStatePerPoll(t *testing.T) {
	_, store := fileEngine(t)
	lock, err := store.Lock("big", checkpoint.ThisProcess("test"))
	must(t, err)
	st := checkpoint.NewState("big", checkpoint.Definition{Workspace: t.TempDir()}, checkpoint.Labels{}, time.Now())
	text := strings.Repeat("x", 4<<10)
	for range 2048 {
		st.Messages = append(st.Messages, conversation.Message{Role: conversation.RoleUser, Text: text})
	}
	log, err := store.Create("big", st)
	must(t, err)
	must(t, log.Close())
	w, err := store.Events("big")
	must(t, err)
	fmt.Fprintln(w, `{"type":"run_start","agent":"big","run":"run-1"}`)
	must(t, w.Close())

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	lines := 0
	must(t, ReadHistory(ctx, store, "big", true, func(Event, []byte) error { lines++; return nil }))
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("1.5 s of following an agent of an 8 MiB state: %d bytes allocated", alloc)
	if lines != 1 || alloc > 1<<20 {
		t.Fatalf("the follower read %d lines and allocated %d bytes: it reads the state as it polls", lines, alloc)
	}

	must(t, lock.Unlock())
	done := make(chan error, 1)
	go func() {
		done <- ReadHistory(context.Background(), store, "big", true, func(Event, []byte) error { return nil })
	}()
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the follower of an agent no process runs has not ended")
	}
}
