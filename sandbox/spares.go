package sandbox

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// A spare is an instance of a fast-mode module restored from its snapshot
// ahead of the call that will use it, so that the call does not wait for
// wazero to make it (most of which is filling the table of a Go module's
// some 3,000 functions; BENCHMARKS.md). Each spare serves exactly one call
// and is never reused: a call still starts from the snapshot in an
// instance nobody ran before. What only the call knows (its stdin, stdout,
// stderr and the filesystems of its mounts) is reached through stand-ins
// the spare was made with and the call binds; everything else an instance
// is made with (arguments, environment, clock, memory limit, the guest
// paths of the mounts) is the spare's key, so a call only takes a spare
// made for a policy like its own.
type spare struct {
	mod            api.Module
	stdin          boundReader
	stdout, stderr boundWriter
	mounts         []*boundFS
}

type (
	boundReader struct{ io.Reader }
	boundWriter struct{ io.Writer }
	boundFS     struct{ experimentalsys.FS }
)

// bind gives the spare the call's stdio and mounts. The guest has not run
// before this, so nothing reached the stand-ins unbound.
func (s *spare) bind(cio callIO) {
	s.stdin.Reader, s.stdout.Writer, s.stderr.Writer = cio.stdin, cio.stdout, cio.stderr
	for i, fsys := range cio.mounts {
		s.mounts[i].FS = fsys
	}
}

// spareKeyOf is what, besides its snapshot, a spare must match in a call's
// policy. The snapshot's key has the memory limit and the mounts' guest
// paths; a call granted real randomness never uses a snapshot.
func spareKeyOf(p Policy) string {
	env := make([]string, 0, len(p.Env))
	for k, v := range p.Env {
		env = append(env, fmt.Sprintf("%q=%q", k, v))
	}
	slices.Sort(env)
	return fmt.Sprintf("args %q env %s real-clock %v", p.Args, strings.Join(env, ","), p.RealClock)
}

// prepare takes the snapshot for p, if the module is in the fast mode and
// p lets calls start from one, and makes the spare for p.
func (m *Module) prepare(ctx context.Context, p Policy) error {
	if m.pre == nil || p.RealRandom {
		return nil
	}
	cm, err := m.compiledFor(ctx, p.memoryPages())
	if err != nil {
		return err
	}
	if err := checkGranted(cm, p); err != nil {
		return err
	}
	rt, err := m.runtime(ctx, p.memoryPages())
	if err != nil {
		return err
	}
	snap, err := m.pre.snapshotFor(ctx, m, rt, cm, p)
	if err != nil || m.r.noSpares {
		return err
	}
	m.refillSpare(ctx, rt, cm, snap, p)
	return nil
}

// refillSpare makes the spare for p from snap unless there is one.
func (m *Module) refillSpare(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, snap *snapshot, p Policy) {
	snap.spares.refill(spareKeyOf(p), func() (*spare, error) {
		return m.makeSpare(ctx, rt, cm, snap, p)
	})
}

// makeSpare instantiates the module for p from snap, unbound.
func (m *Module) makeSpare(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, snap *snapshot, p Policy) (*spare, error) {
	s := &spare{mounts: make([]*boundFS, len(p.Mounts))}
	cio := callIO{stdin: &s.stdin, stdout: &s.stdout, stderr: &s.stderr}
	for i := range s.mounts {
		s.mounts[i] = &boundFS{}
		cio.mounts = append(cio.mounts, s.mounts[i])
	}
	cfg := moduleConfig(p, cio).WithStartFunctions()
	if !p.RealClock {
		cfg = detClock(cfg, snap.clockReadings, nil)
	}
	mod, err := m.restored(ctx, rt, cm, cfg, snap, p.RealClock)
	if err != nil {
		if mod != nil {
			mod.Close(context.Background())
		}
		return nil, err
	}
	s.mod = mod
	return s, nil
}

// maxSpares bounds the spares kept for one snapshot: a process running
// agents whose tools differ in their environment (a key per agent) would
// otherwise keep an instance for each.
const maxSpares = 8

// spares holds at most one spare per key, and at most maxSpares, for one
// snapshot. Past the bound, the spare made longest ago is dropped.
type spares struct {
	mu     sync.Mutex
	ready  map[string]*spare
	order  []string // keys of ready, oldest first
	making map[string]bool
}

// take returns the spare for key, or nil when there is none.
func (ss *spares) take(key string) *spare {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.ready[key]
	if s != nil {
		delete(ss.ready, key)
		ss.order = slices.DeleteFunc(ss.order, func(k string) bool { return k == key })
	}
	return s
}

// refill makes the spare for key with make unless there is one or one is
// being made. A spare that fails to be made is not retried until the next
// call, which makes its own instance and so reports the error.
func (ss *spares) refill(key string, make func() (*spare, error)) {
	ss.mu.Lock()
	if ss.ready == nil {
		ss.ready, ss.making = map[string]*spare{}, map[string]bool{}
	}
	if ss.ready[key] != nil || ss.making[key] {
		ss.mu.Unlock()
		return
	}
	ss.making[key] = true
	ss.mu.Unlock()

	s, err := make()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.making, key)
	if err != nil {
		return
	}
	ss.ready[key] = s
	ss.order = append(ss.order, key)
	for len(ss.order) > maxSpares {
		old := ss.order[0]
		ss.order = ss.order[1:]
		ss.ready[old].mod.Close(context.Background())
		delete(ss.ready, old)
	}
}
