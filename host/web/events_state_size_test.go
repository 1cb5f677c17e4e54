package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// storeAgent makes agent id in the store with a state of messages
// messages of 4 KiB each and an event history of ten short lines, the
// same whatever the state's size.
func storeAgent(t testing.TB, store checkpoint.Store, id string, messages int) {
	t.Helper()
	lock, err := store.Lock(id, checkpoint.ThisProcess("test"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	st := checkpoint.NewState(id, checkpoint.Definition{Workspace: t.TempDir()}, checkpoint.Labels{}, time.Now())
	st.Status = checkpoint.StatusPaused
	text := strings.Repeat("x", 4<<10)
	for i := 0; i < messages; i++ {
		st.Messages = append(st.Messages, conversation.Message{Role: conversation.RoleUser, Text: text})
	}
	log, err := store.Create(id, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	w, err := store.Events(id)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		fmt.Fprintf(w, `{"type":"warning","agent":%q,"run":"run-1","text":"line %d"}`+"\n", id, i)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// allocatedBy is the bytes allocated, on average, by one answer of the
// server to GET path.
func allocatedBy(t *testing.T, srv *Server, path string) uint64 {
	t.Helper()
	const n = 5
	return allocated(func() {
		for i := 0; i < n; i++ {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost"+path, nil))
			if rec.Code != http.StatusOK || strings.Count(rec.Body.String(), "\n") != 10 {
				t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
			}
		}
	}) / n
}

// An events request costs the history it plays back, not the agent's
// state: it once recovered the whole state twice to learn that the agent
// exists (50 clients of an agent with a 7 MB history took serve from 28
// MB to 1.18 GB). Here an agent of an 8 MiB state and one of a 4 KiB
// state, with the same ten lines of history, cost the same to within
// 1 MiB.
func TestEventsCostDoesNotGrowWithState(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	storeAgent(t, f.store, "small", 1)
	storeAgent(t, f.store, "big", 2048)
	small := allocatedBy(t, f.srv, "/api/agents/small/events")
	big := allocatedBy(t, f.srv, "/api/agents/big/events")
	t.Logf("bytes allocated by one events request: 4 KiB state %d, 8 MiB state %d", small, big)
	if big > small+1<<20 {
		t.Fatalf("an events request on an agent of an 8 MiB state allocated %d bytes, on one of 4 KiB %d: it reads the state", big, small)
	}
}

// BenchmarkEventsOfALargeAgent is one events request on an agent of an
// 8 MiB state and a ten-line history (go test -bench EventsOfALarge
// -benchmem).
func BenchmarkEventsOfALargeAgent(b *testing.B) {
	f := newFixture(b, Config{Loopback: true})
	storeAgent(b, f.store, "big", 2048)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/api/agents/big/events", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}
