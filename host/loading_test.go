package host

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cairnrun/cairn/host/model"
	"github.com/cairnrun/cairn/sandbox"
)

// emptyModule is the smallest wasm module: the preamble alone.
var emptyModule = []byte("\x00asm\x01\x00\x00\x00")

// deferredToolset is a toolset of one module that has not started loading.
func deferredToolset(t *testing.T) (*toolset, *deferredLoad) {
	t.Helper()
	rt, err := sandbox.NewRuntime(context.Background(), sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	d := newDeferredLoad(context.Background(), rt, inMemory(emptyModule))
	return &toolset{loads: []*moduleLoad{{loading: d}}}, d
}

func (d *deferredLoad) started() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.loading != nil
}

// providerFunc is a model.Provider made of a function.
type providerFunc func(context.Context, model.Request) (model.Response, error)

func (f providerFunc) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	return f(ctx, req)
}

// A run's modules do not load while its first request is being built; a
// provider not reached over HTTP (the script model) starts them when its
// request returns, and they are prepared for the policies asked before.
func TestToolModulesLoadOnceTheFirstRequestReturns(t *testing.T) {
	ts, d := deferredToolset(t)
	d.Prepare(sandbox.Policy{})
	var during bool
	p := &loadingProvider{tools: ts, Provider: providerFunc(func(context.Context, model.Request) (model.Response, error) {
		during = d.started()
		return model.Response{}, nil
	})}
	if d.started() || d.Done() {
		t.Fatal("the module started loading before the run asked its model")
	}
	if _, err := p.Complete(context.Background(), model.Request{}); err != nil {
		t.Fatal(err)
	}
	if during {
		t.Fatal("the module started loading before the request went out")
	}
	if !d.started() {
		t.Fatal("the module did not start loading after the first request")
	}
	if d.policies != nil {
		t.Fatalf("policies left unprepared: %v", d.policies)
	}
}

// Over HTTP the modules start loading once the request is written, while
// the model has not answered yet.
func TestToolModulesLoadWhileTheFirstRequestIsOut(t *testing.T) {
	ts, d := deferredToolset(t)
	answer := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-answer
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p := &loadingProvider{tools: ts, Provider: model.NewOpenAI(model.Spec{Provider: "openai", Name: "m", BaseURL: srv.URL + "/v1"})}
	errc := make(chan error, 1)
	go func() {
		_, err := p.Complete(context.Background(), model.Request{Messages: nil})
		errc <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); !d.started(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			close(answer)
			t.Fatal("the module did not start loading while the request was out")
		}
	}
	close(answer)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// A call that comes before any request (a resumed round's calls) starts
// its module loading itself.
func TestToolModuleWaitStartsLoading(t *testing.T) {
	_, d := deferredToolset(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d.Wait(ctx) // the empty module may or may not compile; either way it was loaded
	if !d.started() || !d.Done() {
		t.Fatal("Wait did not load the module")
	}
}

// A model that cannot be reached pauses the run before any call: its
// modules are not loaded for nothing.
func TestToolModulesNotLoadedForAFailedRequest(t *testing.T) {
	ts, d := deferredToolset(t)
	p := &loadingProvider{tools: ts, Provider: providerFunc(func(context.Context, model.Request) (model.Response, error) {
		return model.Response{}, model.ErrUnavailable
	})}
	if _, err := p.Complete(context.Background(), model.Request{}); err == nil {
		t.Fatal("the failure was lost")
	}
	if d.started() {
		t.Fatal("a request that failed unwritten started the modules loading")
	}
}

// inMemory is the bytes b, as a module's bytes are given when read later.
func inMemory(b []byte) func() ([]byte, error) { return func() ([]byte, error) { return b, nil } }
