package sandbox

import (
	"reflect"
	"testing"
)

// Trim closes a module's spares; the next call makes its own instance and
// answers as before, and its spare is made again after it.
func TestTrimDropsSparesAndCallsGoOn(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t)}
	want := probe(t, m, p, `{}`)
	m.r.bg.Wait()
	ss, key := &snapshotOf(t, m, p).spares, spareKeyOf(p)
	if n := ss.count(key); n != 1 {
		t.Fatalf("%d spares after a call, want 1", n)
	}
	m.r.Trim()
	if n := ss.count(key); n != 0 {
		t.Fatalf("%d spares after Trim, want 0", n)
	}
	if got := probe(t, m, p, `{}`); !reflect.DeepEqual(got, want) {
		t.Fatalf("a call after Trim answered %+v, before it %+v", got, want)
	}
	m.r.bg.Wait()
	if n := ss.count(key); n != 1 {
		t.Fatalf("%d spares after the call that followed Trim, want 1", n)
	}
}
