package sandbox

import (
	"context"
	"os"
	"reflect"
	"sync"
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
	if n := snapshotOf(t, m, p).spares.count(key); n != 1 {
		t.Fatalf("%d spares after the call that followed Trim, want 1", n)
	}
}

// Trim lets go of a fast-mode module's snapshots and compiled code, which
// the compile cache holds; a call after it loads the code from the cache
// and takes the snapshot again, and answers as before.
func TestTrimDropsSnapshotsAndCompiledAndCallsGoOn(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t)}
	want := probe(t, m, p, `{}`)
	m.r.bg.Wait()
	// The runtime has compiled the command module too.
	if k := m.r.Kept(); k.Snapshots != 1 || k.Compiled != 2 || k.Spares != 1 {
		t.Fatalf("kept %+v after a call, want a snapshot, two compiled modules and a spare", k)
	}
	m.r.Trim()
	if k := m.r.Kept(); k != (Kept{}) {
		t.Fatalf("kept %+v after Trim, want nothing", k)
	}
	if got := probe(t, m, p, `{}`); !reflect.DeepEqual(got, want) {
		t.Fatalf("a call after Trim answered %+v, before it %+v", got, want)
	}
	m.r.bg.Wait()
	if k := m.r.Kept(); k.Snapshots != 1 || k.Compiled != 1 || k.Spares != 1 {
		t.Fatalf("kept %+v after the call that followed Trim, want all of it again", k)
	}
}

// A module the compile cache does not hold keeps its compiled code: Trim
// would otherwise make its next call compile it again. The test builds
// its guest itself, so that it passes run alone.
func TestTrimKeepsCodeTheCacheLacks(t *testing.T) {
	ctx := context.Background()
	reactor, _ := preinitWasm(t)
	rt, err := NewRuntime(ctx, Config{})
	must(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	m, err := rt.Compile(ctx, reactor)
	must(t, err)
	p := Policy{Mounts: workspace(t)}
	probe(t, m, p, `{}`)
	rt.bg.Wait()
	rt.Trim()
	if k := rt.Kept(); k.Compiled != 1 || k.Snapshots != 0 {
		t.Fatalf("kept %+v after Trim without a compile cache, want the compiled module only", k)
	}
	probe(t, m, p, `{}`)
}

// Regression for spares made after their snapshot was dropped: a call
// that ends as Trim runs refills a snapshot no call will use again, and
// what it makes must be closed, not kept where nothing reaches it.
func TestSparesOfADroppedSnapshotAreClosed(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t)}
	probe(t, m, p, `{}`)
	m.r.bg.Wait()
	snap := snapshotOf(t, m, p)
	m.r.Trim()
	cm, err := m.compiledFor(context.Background(), p.memoryPages())
	must(t, err)
	rt, err := m.runtime(context.Background(), p.memoryPages())
	must(t, err)
	m.refillSpare(context.Background(), rt, cm, snap, p)
	if n := snap.spares.readyCount(); n != 0 {
		t.Fatalf("%d spares kept for a dropped snapshot, want 0", n)
	}
}

// Calls that run while Trim lets go of what they use answer as the others:
// Trim waits for them, and they for it.
func TestTrimWhileCalling(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t)}
	want := probe(t, m, p, `{}`)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 5; i++ {
			m.r.Trim()
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				if got := probe(t, m, p, `{}`); !reflect.DeepEqual(got, want) {
					t.Errorf("a call beside Trim answered %+v, want %+v", got, want)
				}
			}
		}()
	}
	wg.Wait()
	<-done
}

// A module whose compiled code Trim let go of still runs when the compile
// cache's directory is removed while the process waits (a cache cleaned
// by hand or by a cleaner of old files): before Trim its calls ran from
// the code in memory, and they must not start failing because of it.
func TestCallAfterTrimFailsWithTheCacheRemoved(t *testing.T) {
	ctx := context.Background()
	preinitModules(t) // builds the guest
	dir := t.TempDir()
	rt, err := NewRuntime(ctx, Config{CacheDir: dir})
	must(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	m, err := rt.Compile(ctx, preinitGuest.reactor)
	must(t, err)
	p := Policy{Mounts: workspace(t)}
	want := probe(t, m, p, `{}`)
	rt.bg.Wait()
	rt.Trim()
	if k := rt.Kept(); k.Compiled != 0 {
		t.Fatalf("kept %+v after Trim with a compile cache, want no compiled module", k)
	}
	must(t, os.RemoveAll(dir))
	if got := probe(t, m, p, `{}`); !reflect.DeepEqual(got, want) {
		t.Fatalf("a call after Trim answered %+v, before it %+v", got, want)
	}
}

// Trim lets go of every compiled module, so nothing of the module may
// still hold one it closed: the list of imports a module keeps (of the
// compiled module its last call checked) would keep that compiled
// module's decoded form, megabytes for a Go module, reachable.
func TestTrimKeepsAClosedCompiledModuleInTheImportsCache(t *testing.T) {
	ctx := context.Background()
	preinitModules(t) // builds the guest
	rt, err := NewRuntime(ctx, Config{CacheDir: t.TempDir()})
	must(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	m, err := rt.Compile(ctx, preinitGuest.reactor)
	must(t, err)
	probe(t, m, Policy{Mounts: workspace(t)}, `{}`)
	rt.bg.Wait()
	if m.imports.last.Load() == nil {
		t.Fatal("a call kept no list of imports")
	}
	rt.Trim()
	if k := rt.Kept(); k.Compiled != 0 {
		t.Fatalf("kept %+v after Trim with a compile cache, want no compiled module", k)
	}
	if l := m.imports.last.Load(); l != nil {
		t.Fatal("after Trim the module's list of imports still holds the compiled module Trim closed")
	}
}
