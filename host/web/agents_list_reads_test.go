package web

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
)

// GET /api/agents reads no agent whose files did not change since the
// last list (the store keeps their summaries), and each other agent once,
// in the store's List: it once read every agent's whole state again for
// its labels and lineage, which the Summary now carries. Here a second
// list of an agent of an 8 MiB state costs less than a tenth of a read
// of that agent.
func TestAgentsListReadsEachAgentOnce(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	storeAgent(t, f.store, "big", 2048)
	list := func() {
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/api/agents", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /api/agents: %d %s", rec.Code, rec.Body)
		}
	}
	list() // a first list, which reads the agent
	read, listed := allocated(func() {
		if _, err := f.store.Read("big"); err != nil {
			t.Fatal(err)
		}
	}), allocated(list)
	t.Logf("bytes allocated: one read %d, one GET /api/agents %d", read, listed)
	if listed > read/10 {
		t.Fatalf("GET /api/agents allocated %d bytes, a read of its one agent %d: it read the unchanged agent again", listed, read)
	}
}

// GET /api/agents/{id} reads the agent once for itself and once in the
// list its sub-agents are found in: it once read it four times (a
// Summary, a Read, the list, and again for the calls awaiting a
// decision). An agent of an 8 MiB state costs less than one and a half
// of its reads (the list's is the store's summary, kept from the first).
func TestAgentViewReadsTheAgentOnceForItself(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	storeAgent(t, f.store, "big", 2048)
	get := func() {
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/api/agents/big", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /api/agents/big: %d %s", rec.Code, rec.Body)
		}
	}
	get()
	read, got := allocated(func() {
		if _, err := f.store.Read("big"); err != nil {
			t.Fatal(err)
		}
	}), allocated(get)
	t.Logf("bytes allocated: one read %d, one GET /api/agents/big %d", read, got)
	if got > read*3/2 {
		t.Fatalf("GET /api/agents/big allocated %d bytes, a read of the agent %d: it reads the agent more than once", got, read)
	}
}

// allocated is how many bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
