package sandbox

import (
	"context"
	"testing"

	"github.com/cairnrun/cairn/abi"
)

// compiledLimits lists the memory limits m is compiled at.
func compiledLimits(m *Module) map[uint32]bool {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	limits := map[uint32]bool{}
	for pages := range m.compiled {
		limits[pages] = true
	}
	return limits
}

// The compile that checked a module at the default memory limit is closed
// once calls compile it at their own limit, and no call used it.
func TestUnusedProbeClosed(t *testing.T) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{})
	must(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	preinitModules(t) // builds the guest
	m, err := rt.Compile(ctx, preinitGuest.reactor)
	must(t, err)
	def, small := Policy{}.memoryPages(), Policy{MemoryLimit: 32 << 20}.memoryPages()
	if got := compiledLimits(m); len(got) != 1 || !got[def] {
		t.Fatalf("compiled at %v after Compile, want the default limit (%d pages) only", got, def)
	}
	probe(t, m, Policy{Mounts: workspace(t), MemoryLimit: 32 << 20}, `{}`)
	rt.bg.Wait()
	if got := compiledLimits(m); len(got) != 1 || !got[small] {
		t.Fatalf("compiled at %v after a call at 32 MiB, want that limit (%d pages) only", got, small)
	}
	probe(t, m, Policy{Mounts: workspace(t)}, `{}`)
	if got := compiledLimits(m); len(got) != 2 {
		t.Fatalf("compiled at %v after a call at the default limit too, want both", got)
	}
}

// A probe a call has used is kept when the module is compiled at another
// limit: the calls at the default limit go on using it.
func TestUsedProbeKept(t *testing.T) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{})
	must(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	preinitModules(t)
	m, err := rt.Compile(ctx, preinitGuest.reactor)
	must(t, err)
	probe(t, m, Policy{Mounts: workspace(t)}, `{}`)
	probe(t, m, Policy{Mounts: workspace(t), MemoryLimit: 32 << 20}, `{}`)
	rt.bg.Wait()
	if got := compiledLimits(m); len(got) != 2 {
		t.Fatalf("compiled at %v, want the default limit and 32 MiB", got)
	}
}

// A module Load compiles is checked at the memory limit of the policy
// prepared for it, so that its calls do not compile it again.
func TestLoadChecksAtThePreparedLimit(t *testing.T) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{})
	must(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	preinitModules(t)
	rt.held = []func(){} // the load starts when the test says
	l := rt.Load(ctx, preinitGuest.reactor)
	p := Policy{Mounts: workspace(t), MemoryLimit: 32 << 20}
	l.Prepare(p)
	held := rt.held
	rt.held = nil
	held[0]() // the load, before the preparation
	m, err := l.Wait(ctx)
	must(t, err)
	if got := compiledLimits(m); len(got) != 1 || !got[p.memoryPages()] {
		t.Fatalf("loaded, compiled at %v, want the prepared limit (%d pages) only", got, p.memoryPages())
	}
	for _, fn := range held[1:] {
		fn()
	}
	if got := compiledLimits(m); len(got) != 1 {
		t.Fatalf("prepared, compiled at %v, want the prepared limit only", got)
	}
}

// Load answers as Compile does, whatever the policy prepared for the
// module: a first policy whose memory limit is below what the module
// needs to start makes that policy's calls fail, not the load (which
// other policies, and a Compile of the same bytes joining it, share).
func TestLoadFailsForAPreparedLimitTooSmall(t *testing.T) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{})
	must(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	preinitModules(t)
	rt.held = []func(){}
	l := rt.Load(ctx, preinitGuest.reactor)
	small := Policy{Mounts: workspace(t), MemoryLimit: 64 << 10}
	l.Prepare(small)
	held := rt.held
	rt.held = nil
	held[0]()
	m, err := l.Wait(ctx)
	if err != nil {
		t.Fatalf("load with a policy of 64 KiB prepared: %v; Compile of the same bytes succeeds", err)
	}
	for _, fn := range held[1:] {
		fn()
	}
	if _, err := m.Call(ctx, small, abi.Request{ABI: abi.Version, Tool: "probe", CallID: "c", Input: `{}`, Workspace: abi.WorkspaceDir}); err == nil {
		t.Fatal("a call under 64 KiB ran a module that needs more")
	}
	probe(t, m, Policy{Mounts: workspace(t)}, `{}`)
}
