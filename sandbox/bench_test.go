package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest/builtin"
	"github.com/cairnrun/cairn/internal/interleave"
	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// BenchmarkReadFile is one call of the built-in read_file, in the same
// run: fork/exec of the tools built as a native binary (the baseline); a
// fresh wazero instance of them built as a command module, which
// initialises the Go runtime in every call; and a fresh instance of the
// embedded module, built in the fast mode, restored from its snapshot,
// either made when the call comes or made ahead (a spare). "empty" is a
// call naming a tool the module lacks, which the guest answers at once:
// the least a call of a Go tool does. "minimal-module" is a module of a
// few instructions whose call ends at once: the least a call does, with
// no Go runtime in it. Compile caches are warm.
//
// Calls follow each other in one of these paces: back to back; paced,
// 2 ms apart, as an agent makes them a model's turn apart (the CPU idles
// meanwhile, and its caches go cold); and ready, back to back but each
// once the background work of the last (making the next spare) is done.
// Inline is like ready, but that work runs between calls on the
// benchmark's own goroutine rather than in the background (where it likely
// runs on the other core); paced-inline is paced, with that work run so.
// cairn always runs it in the background.
// p50-µs and p90-µs are the median and 90th percentile of one call;
// faults/op counts the process's page faults, background work included.
//
//	go test ./sandbox -run '^$' -bench ReadFile -benchtime 1000x
func BenchmarkReadFile(b *testing.B) {
	ctx := context.Background()
	ws, p, req := readFileCall(b)
	wasmCall := func(wasm []byte, req abi.Request, pace string, noSpares bool) func(b *testing.B) {
		return func(b *testing.B) {
			r, err := NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache")})
			must(b, err)
			defer r.Close(ctx)
			r.noSpares = noSpares
			m, err := r.Compile(ctx, wasm)
			must(b, err)
			between := betweenCalls(r, pace)
			pacedTimed(b, between, func() {
				res, err := m.Call(ctx, p, req)
				if exit := (*exitError)(nil); errors.As(err, &exit) && exit.Code == minimalExit {
					return // the minimal module answers so
				}
				if err != nil || (req.Tool == "read_file" && res.Response.Error != "") {
					b.Fatal(err, res.Response.Error)
				}
			})
		}
	}

	forkExec := nativeReadFile(b, ws)
	for _, pace := range []string{"back-to-back", "paced"} {
		b.Run("native-fork-exec/"+pace, func(b *testing.B) { pacedTimed(b, paceOf(pace), forkExec) })
	}

	command, err := buildPackage("github.com/cairnrun/cairn/guest/builtin/cmd/builtin", "exe")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("wasm-fresh-instance/back-to-back", wasmCall(command, req, "back-to-back", true))
	for _, pace := range []string{"back-to-back", "paced"} {
		b.Run("wasm-preinit/made-at-call/"+pace, wasmCall(builtin.Module, req, pace, true))
	}
	for _, pace := range []string{"back-to-back", "paced", "ready", "inline", "paced-inline"} {
		b.Run("wasm-preinit/spare/"+pace, wasmCall(builtin.Module, req, pace, false))
	}
	empty := abi.Request{ABI: abi.Version, Tool: "-", Input: "{}", Workspace: abi.WorkspaceDir}
	b.Run("wasm-preinit/empty/made-at-call/paced", wasmCall(builtin.Module, empty, "paced", true))
	for _, pace := range []string{"paced", "ready"} {
		b.Run("wasm-preinit/empty/spare/"+pace, wasmCall(builtin.Module, empty, pace, false))
	}
	// The least a call costs without the Go runtime: a module of a few
	// instructions (reactorWasm) that ends its call at once, reading and
	// writing nothing.
	for _, pace := range []string{"paced", "ready"} {
		b.Run("wasm-preinit/minimal-module/spare/"+pace, wasmCall(reactorWasm(false), empty, pace, false))
	}
}

// minimalExit is how reactorWasm's call ends: with status 12.
const minimalExit = 12

// BenchmarkTurn is a model's turn of read_file calls run at once, as the
// host runs a turn's calls, each turn once the background work of the
// last is done (for three calls, the three spares the last turn asked
// for): p50-µs is the median of a whole turn. A turn of one call is the
// baseline.
//
//	go test ./sandbox -run '^$' -bench Turn -benchtime 1000x
func BenchmarkTurn(b *testing.B) {
	ctx := context.Background()
	_, p, req := readFileCall(b)
	for _, calls := range []int{1, 3} {
		b.Run(fmt.Sprintf("calls-%d", calls), func(b *testing.B) {
			r, err := NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache")})
			must(b, err)
			defer r.Close(ctx)
			m, err := r.Compile(ctx, builtin.Module)
			must(b, err)
			pacedTimed(b, r.bg.Wait, func() {
				var wg sync.WaitGroup
				errs := make([]error, calls)
				for i := range calls {
					wg.Go(func() {
						res, err := m.Call(ctx, p, req)
						if err == nil && res.Response.Error != "" {
							err = errors.New(res.Response.Error)
						}
						errs[i] = err
					})
				}
				wg.Wait()
				must(b, errors.Join(errs...))
			})
		})
	}
}

// nativeReadFile builds the built-in tools as a native binary and returns
// one read_file call of it on f.txt in ws, by fork/exec: the baseline.
func nativeReadFile(b *testing.B, ws string) func() {
	bin := filepath.Join(b.TempDir(), "builtin")
	build := exec.Command("go", "build", "-o", bin, "github.com/cairnrun/cairn/guest/builtin/cmd/builtin")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	req, err := abi.Marshal(abi.Request{ABI: abi.Version, Tool: "read_file", Input: `{"path":"f.txt"}`, Workspace: ws})
	must(b, err)
	return func() {
		cmd := exec.Command(bin)
		cmd.Stdin = bytes.NewReader(req)
		out, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		if r, err := abi.DecodeResponse(out); err != nil || r.Error != "" {
			b.Fatal(err, r.Error)
		}
	}
}

// BenchmarkReadFileInterleaved is BenchmarkReadFile's calls from a spare
// with their baseline interleaved: every round runs a fork/exec of the
// native build, a read_file call and an empty call, one after the other,
// so that the three meet the machine in the same state. A virtual
// machine's speed drifts from minute to minute, and timings taken minutes
// apart drift with it; the ratio of calls timed side by side does not.
// Paced, each call comes after 2 ms idle; ready, each wasm call comes once
// the background work of the last is done. Reported: the p50 of each
// (µs), and the wasm calls' p50 over fork/exec's.
//
//	go test ./sandbox -run '^$' -bench ReadFileInterleaved -benchtime 1000x
func BenchmarkReadFileInterleaved(b *testing.B) {
	ctx := context.Background()
	ws, p, readFile := readFileCall(b)
	forkExec := nativeReadFile(b, ws)
	for _, pace := range []string{"paced", "ready"} {
		b.Run(pace, func(b *testing.B) {
			r, err := NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache")})
			must(b, err)
			defer r.Close(ctx)
			m, err := r.Compile(ctx, builtin.Module)
			must(b, err)
			call := func(req abi.Request) func() {
				return func() {
					if res, err := m.Call(ctx, p, req); err != nil || (req.Tool == "read_file" && res.Response.Error != "") {
						b.Fatal(err, res.Response.Error)
					}
				}
			}
			empty := abi.Request{ABI: abi.Version, Tool: "-", Input: "{}", Workspace: abi.WorkspaceDir}
			kinds := []interleave.Way{{Name: "fork-exec", Call: forkExec}, {Name: "read-file", Call: call(readFile)}, {Name: "empty", Call: call(empty)}}
			between := betweenCalls(r, pace)
			p50 := interleave.Medians(b, kinds, between)
			b.ReportMetric(p50[1]/p50[0], "read-file/fork-exec")
			b.ReportMetric(p50[2]/p50[0], "empty/fork-exec")
		})
	}
}

// BenchmarkGuestCall is the guest's part of a call alone: the same
// request served again and again by abi.CallExport in one instance of the
// built-in module, restored from its snapshot once. cairn never runs two
// calls in one instance; this is the floor under BenchmarkReadFile, what
// no way of making instances can take away. "empty" is as there. In
// "spare-made-between", another instance is made from the snapshot and
// closed before each call, untimed, as a call's spare is made in the
// background between two calls: what that leaves in the CPU's caches, and
// what it takes out of them, shows in the call after it.
//
//	go test ./sandbox -run '^$' -bench GuestCall -benchtime 1000x
func BenchmarkGuestCall(b *testing.B) {
	ctx := context.Background()
	_, p, readFile := readFileCall(b)
	for _, tool := range []string{"read_file", "empty"} {
		for _, between := range []string{"nothing-between", "spare-made-between"} {
			b.Run(tool+"/"+between, func(b *testing.B) {
				req := abi.Request{ABI: abi.Version, Tool: "-", Input: "{}", Workspace: abi.WorkspaceDir}
				if tool == "read_file" {
					req = readFile
				}
				m, err := testRT.Compile(ctx, builtin.Module)
				must(b, err)
				rt, cm, snap := takenSnapshot(b, m, p)
				s, err := m.makeSpare(ctx, rt, cm, snap, p)
				must(b, err)
				defer s.mod.Close(ctx)
				fsys, closeFS, err := mounts(context.Background(), p.Mounts, guestfs.NewBudget(0), p.staging())
				must(b, err)
				defer closeFS()
				in, err := abi.Marshal(req)
				must(b, err)
				pace := func() {}
				if between == "spare-made-between" {
					pace = func() {
						other, err := m.makeSpare(ctx, rt, cm, snap, p)
						must(b, err)
						other.mod.Close(ctx)
					}
				}
				pacedTimed(b, pace, func() {
					s.bind(callIO{stdin: bytes.NewReader(in), stdout: &capped{limit: 1 << 20}, stderr: &capped{limit: 1 << 20}, mounts: fsys})
					must(b, m.callExport(ctx, s.mod))
				})
			})
		}
	}
}

// betweenCalls is what runs between two calls of r in a pace (see
// BenchmarkReadFile).
func betweenCalls(r *Runtime, pace string) func() {
	switch pace {
	case "ready":
		return r.bg.Wait
	case "inline", "paced-inline":
		r.holdBackground()
		idle := paceOf(strings.TrimSuffix(pace, "-inline"))
		return func() {
			r.runHeld()
			idle()
		}
	}
	return paceOf(pace)
}

// paceOf is what runs between two calls of a benchmark in a pace that
// does not depend on the runtime: back to back or paced.
func paceOf(pace string) func() {
	if pace == "paced" {
		return func() { time.Sleep(2 * time.Millisecond) }
	}
	return func() {}
}

// readFileCall makes the workspace of the read_file benchmarks, a 2.7 KB
// text file f.txt, and returns it, a read-only policy mounting it, and the
// request that reads the file.
func readFileCall(b *testing.B) (string, Policy, abi.Request) {
	ws := b.TempDir()
	content := bytes.Repeat([]byte("a line of text in the file\n"), 100)
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), content, 0o644); err != nil {
		b.Fatal(err)
	}
	p := Policy{Mounts: []Mount{{HostPath: ws, GuestPath: abi.WorkspaceDir, ReadOnly: true}}}
	req := abi.Request{ABI: abi.Version, Tool: "read_file", Input: `{"path":"f.txt"}`, Workspace: abi.WorkspaceDir}
	return ws, p, req
}

// timed runs fn b.N times and reports the median and 90th percentile.
func timed(b *testing.B, fn func()) { pacedTimed(b, func() {}, fn) }

// pacedTimed is timed with between run, untimed, before every call.
func pacedTimed(b *testing.B, between func(), fn func()) {
	fn() // the first call may compile or take a snapshot
	d := make([]time.Duration, b.N)
	var before syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	for i := range d {
		// Not b.StopTimer: it reads the memory statistics, which stops
		// the world, and the percentiles are timed here anyway (ns/op of
		// a paced run includes what runs between calls).
		between()
		start := time.Now()
		fn()
		d[i] = time.Since(start)
	}
	b.StopTimer()
	var after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	b.ReportMetric(float64(after.Minflt-before.Minflt)/float64(b.N), "faults/op")
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(d[len(d)*9/10].Nanoseconds())/1e3, "p90-µs")
}

// BenchmarkStopping is what making a guest stoppable at its deadline
// costs, in the same run: two loop-heavy functions that call nothing (the
// tightest loop there is, a sum of 10 million numbers at about a cycle a
// turn, and a tool's kind of loop, the FNV-1a hash of 10 million bytes)
// and one read_file call of the built-in tools, each with no way to stop
// them (the baseline; not for the read_file call, which this runs through
// the sandbox), with the sandbox's stop checks, and with wazero's
// WithCloseOnContextDone instead.
//
//	go test ./sandbox -run '^$' -bench Stopping -benchtime 20x
func BenchmarkStopping(b *testing.B) {
	ctx := context.Background()
	loops := []struct{ name, wat, export string }{{"loop", "loop", "sum"}, {"hash-loop", "hash", "fnv"}}
	for _, l := range loops {
		for _, mode := range []string{"unstoppable", "stop-checks", "close-on-done"} {
			b.Run(l.name+"/"+mode, func(b *testing.B) {
				wasm := watBytes[l.wat]
				if mode == "stop-checks" {
					sc, err := wasmcode.WithStopChecks(wasm)
					must(b, err)
					wasm = sc.Code
				}
				rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(mode == "close-on-done"))
				defer rt.Close(ctx)
				mod, err := rt.Instantiate(ctx, wasm)
				must(b, err)
				fn := mod.ExportedFunction(l.export)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := fn.Call(ctx, 10_000_000); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	_, p, req := readFileCall(b)
	for _, mode := range []string{"stop-checks", "close-on-done"} {
		b.Run("go-read-file/"+mode, func(b *testing.B) {
			r, err := NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache")})
			must(b, err)
			defer r.Close(ctx)
			r.noStopChecks = mode == "close-on-done"
			m, err := r.Compile(ctx, builtin.Module)
			must(b, err)
			timed(b, func() {
				if res, err := m.Call(ctx, p, req); err != nil || res.Response.Error != "" {
					b.Fatal(err, res.Response.Error)
				}
			})
		})
	}
}

// BenchmarkDeadline is how late an infinite loop returns after its
// deadline (late-µs), beside the whole of a call that returns at once
// (empty), in the same run.
//
//	go test ./sandbox -run '^$' -bench Deadline -benchtime 50x
func BenchmarkDeadline(b *testing.B) {
	ctx := context.Background()
	b.Run("empty", func(b *testing.B) {
		m, err := testRT.Compile(ctx, watBytes["loop"])
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if _, err := m.Run(ctx, Policy{}, nil, io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("spin-past-deadline", func(b *testing.B) {
		m, err := testRT.Compile(ctx, watBytes["spin"])
		if err != nil {
			b.Fatal(err)
		}
		var late time.Duration
		for i := 0; i < b.N; i++ {
			deadline := time.Now().Add(2 * time.Millisecond)
			dctx, cancel := context.WithDeadline(ctx, deadline)
			_, err := m.Run(dctx, Policy{}, nil, io.Discard, io.Discard)
			late += time.Since(deadline)
			cancel()
			if !errors.Is(err, ErrDeadline) {
				b.Fatalf("got %v, want ErrDeadline", err)
			}
		}
		b.ReportMetric(float64(late.Microseconds())/float64(b.N), "late-µs")
	})
}

// BenchmarkOverlayWrite is one call of a Go guest that writes 1 or 100
// small files, in the same run: on a plain workspace mount (the baseline),
// and on an overlay whose effects are then listed, checked and applied
// (each file synced and renamed into place, its directory synced) and its
// staging discarded, which is what a call costs the host end to end.
// overlay-call is the overlay call alone, without overlay.Apply. x-plain is the
// time per call over the plain mount's in the same run.
//
//	go test ./sandbox -run '^$' -bench OverlayWrite -benchtime 50x
func BenchmarkOverlayWrite(b *testing.B) {
	ctx := context.Background()
	m, err := testRT.Compile(ctx, guestBytes["ovprog"])
	if err != nil {
		b.Fatal(err)
	}
	for _, files := range []int{1, 100} {
		args := []string{fmt.Sprintf("many:/work/out:%d", files)}
		// fresh is a new workspace holding the empty directory out.
		fresh := func(b *testing.B) string {
			ws, err := os.MkdirTemp(b.TempDir(), "ws")
			if err == nil {
				err = os.Mkdir(filepath.Join(ws, "out"), 0o755)
			}
			if err != nil {
				b.Fatal(err)
			}
			return ws
		}
		run := func(b *testing.B, mt Mount) {
			mt.GuestPath = "/work"
			var out bytes.Buffer
			ex, err := m.Run(ctx, Policy{Args: args, Mounts: []Mount{mt}}, nil, &out, &out)
			if err != nil || ex.Code != 0 || !bytes.HasSuffix(out.Bytes(), []byte(" ok\n")) {
				b.Fatalf("%v, exit %d: %s", err, ex.Code, out.String())
			}
		}
		var plain float64 // ns per call on the plain mount, in this run
		b.Run(fmt.Sprintf("files=%d/plain", files), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				ws := fresh(b)
				b.StartTimer()
				run(b, Mount{HostPath: ws})
			}
			plain = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		for _, apply := range []bool{false, true} {
			name := "overlay-call"
			if apply {
				name = "overlay+apply"
			}
			b.Run(fmt.Sprintf("files=%d/%s", files, name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					ws, staging := fresh(b), filepath.Join(b.TempDir(), "staging")
					b.StartTimer()
					overlayCall(b, ws, staging, apply, func(ov *overlay.Overlay) { run(b, Mount{Overlay: ov}) })
				}
				if plain > 0 {
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/plain, "x-plain")
				}
			})
		}
	}
}

// overlayCall is what the host does around one call on an overlay: make
// it, run the call, list its effects, and (apply) check and apply them and
// discard the staging directory.
func overlayCall(b *testing.B, ws, staging string, apply bool, call func(*overlay.Overlay)) {
	ov, err := overlay.New(ws, staging)
	if err != nil {
		b.Fatal(err)
	}
	defer ov.Close()
	call(ov)
	effects, err := ov.Effects()
	if err != nil || len(effects) == 0 {
		b.Fatal(err, effects)
	}
	if !apply {
		return
	}
	if c, err := overlay.Check(ws, effects); err != nil || len(c) > 0 {
		b.Fatal(err, c)
	}
	if err := overlay.Apply(ws, staging, effects); err != nil {
		b.Fatal(err)
	}
	if err := overlay.Discard(staging); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEnvelopeInWasm runs abi's BenchmarkEnvelope compiled to wasm,
// in the sandbox with the real clock: a call's envelopes through abi's
// codec and through the CBOR library (the baseline), where the
// guest decodes and encodes them. Reported: each ns/op of the guest's run,
// and the codec's over the library's.
//
//	go test ./sandbox -run '^$' -bench EnvelopeInWasm -benchtime 1x
func BenchmarkEnvelopeInWasm(b *testing.B) {
	ctx := context.Background()
	bin := filepath.Join(b.TempDir(), "abi.test.wasm")
	build := exec.Command("go", "test", "-c", "-o", bin, "github.com/cairnrun/cairn/abi")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	wasm, err := os.ReadFile(bin)
	must(b, err)
	m, err := testRT.Compile(ctx, wasm)
	must(b, err)
	for range b.N {
		var out, errOut bytes.Buffer
		p := Policy{RealClock: true, Timeout: 5 * time.Minute, Args: []string{"-test.run=^$", "-test.bench=Envelope"}}
		ex, err := m.Run(ctx, p, nil, &out, &errOut)
		if err != nil || ex.Code != 0 {
			b.Fatalf("%v, exit %d: %s%s", err, ex.Code, out.Bytes(), errOut.Bytes())
		}
		ns := map[string]float64{}
		for _, line := range strings.Split(out.String(), "\n") {
			// BenchmarkEnvelope/decode-request/fast   1000000   1234 ns/op
			f := strings.Fields(line)
			if len(f) >= 4 && f[3] == "ns/op" && strings.HasPrefix(f[0], "BenchmarkEnvelope/") {
				v, err := strconv.ParseFloat(f[2], 64)
				must(b, err)
				ns[strings.TrimSuffix(strings.TrimPrefix(f[0], "BenchmarkEnvelope/"), "-1")] = v
			}
		}
		for _, op := range []string{"decode-request", "encode-response", "decode-response"} {
			fast, lib := ns[op+"/codec"], ns[op+"/library"]
			if fast == 0 || lib == 0 {
				b.Fatalf("no figures for %s in\n%s", op, out.Bytes())
			}
			b.ReportMetric(fast, op+"-codec-ns")
			b.ReportMetric(lib, op+"-library-ns")
			b.ReportMetric(fast/lib, op+"-codec/library")
		}
	}
}

// holdBackground makes background collect its work instead of starting it.
func (r *Runtime) holdBackground() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held = []func(){}
}

// runHeld runs the work background collected, on the caller's goroutine.
func (r *Runtime) runHeld() {
	r.mu.Lock()
	work := r.held
	r.held = []func(){}
	r.mu.Unlock()
	for _, fn := range work {
		fn()
	}
}
