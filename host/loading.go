package host

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"sync"
	"sync/atomic"

	"github.com/cairnrun/cairn/host/model"
	"github.com/cairnrun/cairn/sandbox"
)

// A run's tool modules start loading (from the compile cache, or compiling)
// only once its first model request is on its way: loading takes every core
// for a few hundred milliseconds, and on a small machine it would otherwise
// take them from the work that builds and sends that request, which then
// arrives at the model two to four times later. The model's answer takes
// longer than the request's sending, so the modules are still ready before
// most first calls; a call that comes first starts them itself.

// deferredLoad is a tool module whose loading starts when the run's first
// request has been sent (see startLoading), or when it is first waited for.
type deferredLoad struct {
	ctx  context.Context
	rt   *sandbox.Runtime
	wasm func() ([]byte, error) // the module's bytes, read once loading starts
	// recorded is the digest the module loaded must have ("": any); see
	// moduleFile.
	recorded string

	mu       sync.Mutex
	loading  *sandbox.Loading // nil until started
	policies []sandbox.Policy // to prepare once started
}

func newDeferredLoad(ctx context.Context, rt *sandbox.Runtime, wasm func() ([]byte, error)) *deferredLoad {
	return &deferredLoad{ctx: context.WithoutCancel(ctx), rt: rt, wasm: wasm}
}

// start begins loading the module, once, and returns its Loading.
func (d *deferredLoad) start() *sandbox.Loading {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.loading == nil {
		d.loading = d.rt.LoadFrom(d.ctx, d.wasm)
		d.wasm = nil // the Loading has it now
		for _, p := range d.policies {
			d.loading.Prepare(p)
		}
		d.policies = nil
	}
	return d.loading
}

// Wait starts the module loading if it has not and waits for it (see
// sandbox.Loading.Wait).
func (d *deferredLoad) Wait(ctx context.Context) (*sandbox.Module, error) {
	mod, err := d.start().Wait(ctx)
	if err == nil && d.recorded != "" && mod.Digest() != d.recorded {
		return nil, fmt.Errorf("tool module: %w", errModuleChanged)
	}
	return mod, err
}

// Prepare readies the module for calls under p once it has loaded (see
// sandbox.Loading.Prepare).
func (d *deferredLoad) Prepare(p sandbox.Policy) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.loading == nil {
		d.policies = append(d.policies, p)
		return
	}
	d.loading.Prepare(p)
}

// Done reports whether the module has started loading and finished, or
// failed to.
func (d *deferredLoad) Done() bool {
	d.mu.Lock()
	l := d.loading
	d.mu.Unlock()
	return l != nil && l.Done()
}

// startLoading starts every module of the set loading.
func (ts *toolset) startLoading() {
	for _, l := range ts.loads {
		l.loading.start()
	}
}

// loadingProvider is a run's model: it starts the run's tool modules
// loading once a request has been written to the model's connection, or
// once a request is answered, for a provider that is not reached over
// HTTP. A request that fails before it is written (a model that cannot be
// reached pauses the run) starts nothing.
type loadingProvider struct {
	model.Provider
	tools   *toolset
	also    []func() // more to start with the modules
	once    sync.Once
	started atomic.Bool
}

// alsoStart has fn run when the modules start loading. It is called
// before the run's first request.
func (p *loadingProvider) alsoStart(fn func()) { p.also = append(p.also, fn) }

func (p *loadingProvider) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if p.started.Load() {
		return p.Provider.Complete(ctx, req)
	}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { p.start() },
	})
	resp, err := p.Provider.Complete(ctx, req)
	if err == nil {
		p.start()
	}
	return resp, err
}

func (p *loadingProvider) start() {
	p.once.Do(func() {
		p.tools.startLoading()
		for _, fn := range p.also {
			fn()
		}
		p.started.Store(true)
	})
}
