package sandbox

import (
	"testing"
	"time"
)

// TrimIdle leaves alone what a call used within the quiet spell, and what
// a call (or work for later calls) is using now; once the runtime has
// been quiet that long it lets go of what Trim does.
func TestTrimIdleOnlyWhenQuiet(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t)}
	probe(t, m, p, `{}`)
	m.r.bg.Wait()
	before := m.r.Kept()
	if before.Snapshots == 0 || before.Compiled == 0 {
		t.Fatalf("kept %+v after a call, want a snapshot and compiled code", before)
	}
	if m.r.TrimIdle(time.Hour) {
		t.Fatal("TrimIdle trimmed an hour's quiet after a call just made")
	}
	if k := m.r.Kept(); k != before {
		t.Fatalf("kept %+v after a refused TrimIdle, want %+v", k, before)
	}
	done := m.r.using() // as a call running on another goroutine
	if m.r.TrimIdle(0) {
		done()
		t.Fatal("TrimIdle trimmed while a call was running")
	}
	done()
	if !m.r.TrimIdle(0) {
		t.Fatal("TrimIdle did not trim a quiet runtime")
	}
	if k := m.r.Kept(); k != (Kept{}) {
		t.Fatalf("kept %+v after TrimIdle, want nothing", k)
	}
	if m.r.TrimIdle(0) {
		t.Fatal("TrimIdle trimmed again with nothing kept")
	}
	probe(t, m, p, `{}`) // and calls go on
}
