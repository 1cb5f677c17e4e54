package sandbox

import (
	"context"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/cairnrun/cairn/abi"
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
	mod api.Module
	// call is mod's abi.CallExport, looked up when the spare is made:
	// wazero makes a function's stack (10 KiB) as it looks it up.
	call           api.Function
	stdin          boundReader
	stdout, stderr boundWriter
	mounts         []*boundFS
	sleep          sleeper
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
	if cio.sleep != nil {
		s.sleep.bind(cio.sleep.stop)
	}
	for i, fsys := range cio.mounts {
		s.mounts[i].FS = fsys
	}
}

// spareKeyOf is what, besides its snapshot, a spare must match in a call's
// policy. The snapshot's key has the memory limit and the mounts' guest
// paths; a call granted real randomness never uses a snapshot.
//
// It is made at every call, so by appending, not with fmt: "args", the
// arguments quoted, "env", the sorted quoted pairs, "real-clock" and
// whether it is granted.
func spareKeyOf(p Policy) string {
	b := append(make([]byte, 0, 64), "args ["...)
	for i, a := range p.Args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendQuote(b, a)
	}
	b = append(b, "] env "...)
	env := make([]string, 0, len(p.Env))
	for k, v := range p.Env {
		env = append(env, strconv.Quote(k)+"="+strconv.Quote(v))
	}
	slices.Sort(env)
	b = append(b, strings.Join(env, ",")...)
	b = strconv.AppendBool(append(b, " real-clock "...), p.RealClock)
	return string(b)
}

// prepare takes the snapshot for p, if the module is in the fast mode and
// p lets calls start from one, and makes the spares for p.
func (m *Module) prepare(ctx context.Context, p Policy) error {
	if m.pre == nil || p.RealRandom {
		return nil
	}
	defer m.r.using()()
	cm, err := m.compiledFor(ctx, p.memoryPages())
	if err != nil {
		return err
	}
	if err := m.checkGranted(cm, p); err != nil {
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

// refillSpare makes spares for p from snap until there are as many as
// p's key wants (see spares).
func (m *Module) refillSpare(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, snap *snapshot, p Policy) {
	snap.spares.refill(spareKeyOf(p), func() (*spare, error) {
		return m.makeSpare(ctx, rt, cm, snap, p)
	})
}

// makeSpare instantiates the module for p from snap, unbound.
func (m *Module) makeSpare(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, snap *snapshot, p Policy) (*spare, error) {
	s := &spare{mounts: make([]*boundFS, len(p.Mounts))}
	cio := callIO{stdin: &s.stdin, stdout: &s.stdout, stderr: &s.stderr, sleep: &s.sleep}
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
	s.mod, s.call = mod, mod.ExportedFunction(abi.CallExport)
	return s, nil
}

// maxSpares bounds the spares kept for one snapshot: a process running
// agents whose tools differ in their environment (a key per agent) would
// otherwise keep an instance for each.
const maxSpares = 8

// maxSparesPerKey bounds the spares kept for one key. A model's turn may
// ask for several calls at once, which the host runs at once; a key keeps
// as many spares as calls of it have run at once, up to this, so that the
// calls of the next such turn do not make their instances while they wait.
const maxSparesPerKey = 4

// spares holds the spares made for one snapshot, by key: for each key,
// as many as its calls have run at once (at least one, at most
// maxSparesPerKey), and at most maxSpares in all. Past that bound, the
// spare made longest ago is dropped.
type spares struct {
	mu     sync.Mutex
	ready  map[string][]*spare // oldest first
	order  []string            // the key of every ready spare, oldest first
	making map[string]int      // spares being made
	active map[string]int      // calls running (between take and done)
	depth  map[string]int      // spares wanted: the most calls that ran at once
	closed bool                // the snapshot is dropped: no more spares (see Runtime.Trim)
	made   *sync.Cond          // signalled as each spare being made is made, or fails
}

func (ss *spares) init() {
	if ss.ready == nil {
		ss.ready, ss.making = map[string][]*spare{}, map[string]int{}
		ss.active, ss.depth = map[string]int{}, map[string]int{}
		ss.made = sync.NewCond(&ss.mu)
	}
}

// take returns a spare for key, or nil when there is none. A spare being
// made for key is waited for (a millisecond or so) rather than a second
// instance made beside it, which would map the snapshot's image again.
// The call that takes it counts as running until it calls done, whether
// or not there was a spare.
func (ss *spares) take(key string) *spare {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.init()
	ss.active[key]++
	ss.depth[key] = min(maxSparesPerKey, max(ss.depth[key], ss.active[key]))
	for len(ss.ready[key]) == 0 {
		if ss.making[key] == 0 || ss.closed {
			return nil
		}
		ss.made.Wait()
	}
	list := ss.ready[key]
	ss.ready[key] = list[1:]
	if len(list) == 1 {
		delete(ss.ready, key)
	}
	i := slices.Index(ss.order, key)
	ss.order = slices.Delete(ss.order, i, i+1)
	return list[0]
}

// done ends a call that take counted, and tells whether it was the last
// of key's calls running.
func (ss *spares) done(key string) (last bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.active[key]--
	if ss.active[key] > 0 {
		return false
	}
	delete(ss.active, key)
	return true
}

// refill makes spares for key with make, one at a time, until there are
// as many, ready or being made, as the key wants. It stops while a call
// of key runs: the call refills once it has run (see Module.instantiate),
// and may then reuse the memory it ran in, where a spare made meanwhile
// (by Loading.Prepare, racing a first call) would map the snapshot's
// image a second time. A spare that fails to be made is not retried
// until the next call, which makes its own instance and so reports the
// error.
func (ss *spares) refill(key string, make func() (*spare, error)) {
	for {
		ss.mu.Lock()
		ss.init()
		if ss.closed || ss.active[key] > 0 || len(ss.ready[key])+ss.making[key] >= max(1, ss.depth[key]) {
			ss.mu.Unlock()
			return
		}
		ss.making[key]++
		ss.mu.Unlock()

		s, err := make()
		ss.mu.Lock()
		if ss.making[key]--; ss.making[key] == 0 {
			delete(ss.making, key)
		}
		ss.made.Broadcast() // the calls waiting look again once this unlocks
		if err != nil || ss.closed {
			ss.mu.Unlock()
			if err == nil {
				s.mod.Close(context.Background())
			}
			return
		}
		ss.ready[key] = append(ss.ready[key], s)
		ss.order = append(ss.order, key)
		for len(ss.order) > maxSpares {
			ss.dropOldest()
		}
		ss.mu.Unlock()
	}
}

// dropOldest closes the spare made longest ago. A key left with none
// forgets how many it wanted.
func (ss *spares) dropOldest() {
	key := ss.order[0]
	ss.order = ss.order[1:]
	list := ss.ready[key]
	list[0].mod.Close(context.Background())
	ss.ready[key] = list[1:]
	if len(list) == 1 {
		delete(ss.ready, key)
		if ss.active[key] == 0 && ss.making[key] == 0 {
			delete(ss.depth, key)
		}
	}
}
