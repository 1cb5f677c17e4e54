package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// Every entry point of the library, given zero values, nil, or a nil
// *FileStore (what `store, _ := host.OpenStore(dir)` gives when the open
// fails), returns an error and does not panic.
func TestZeroValuesErrNotPanic(t *testing.T) {
	ctx := context.Background()
	var nilStore *checkpoint.FileStore
	var zero, nilEngine = &host.Engine{}, (*host.Engine)(nil)
	eng, err := host.NewEngine(ctx, host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)

	tests := []struct {
		name string
		call func() error
		want error // nil: any error
	}{
		{"NewEngine with a nil *FileStore", func() error { _, err := host.NewEngine(ctx, host.Config{Store: nilStore}); return err }, host.ErrNoStore},
		{"Run without an Agent", func() error { _, err := eng.Run(ctx, host.RunOptions{}); return err }, host.ErrNoAgentFile},
		{"Run without an Agent of no agent", func() error { _, err := eng.Run(ctx, host.RunOptions{ID: "nobody"}); return err }, host.ErrNoAgentFile},
		{"Run without an Agent, fresh", func() error { _, err := eng.Run(ctx, host.RunOptions{ID: "a", Fresh: true}); return err }, host.ErrNoAgentFile},
		{"Run of a zero Engine", func() error { _, err := zero.Run(ctx, host.RunOptions{}); return err }, host.ErrNoEngine},
		{"Run of a nil Engine", func() error { _, err := nilEngine.Run(ctx, host.RunOptions{}); return err }, host.ErrNoEngine},
		{"Resume, zero options", func() error { _, err := eng.Resume(ctx, host.ResumeOptions{}); return err }, nil},
		{"Resume of a nil Engine", func() error { _, err := nilEngine.Resume(ctx, host.ResumeOptions{}); return err }, host.ErrNoEngine},
		{"Ask, zero options", func() error { _, err := eng.Ask(ctx, host.AskOptions{}); return err }, nil},
		{"Ask of a zero Engine", func() error { _, err := zero.Ask(ctx, host.AskOptions{}); return err }, host.ErrNoEngine},
		{"Decide, zero values", func() error { return eng.Decide(ctx, "", "", host.Decision{}) }, nil},
		{"Decide of a nil Engine", func() error { return nilEngine.Decide(ctx, "", "", host.Decision{}) }, host.ErrNoEngine},
		{"Snapshot, zero values", func() error { _, err := eng.Snapshot(ctx, "", ""); return err }, nil},
		{"Snapshot of a zero Engine", func() error { _, err := zero.Snapshot(ctx, "", ""); return err }, host.ErrNoEngine},
		{"Fork, zero options", func() error { _, err := eng.Fork(ctx, host.ForkOptions{}); return err }, nil},
		{"Fork of a nil Engine", func() error { _, err := nilEngine.Fork(ctx, host.ForkOptions{}); return err }, host.ErrNoEngine},
		{"Changes, zero values", func() error { _, _, err := eng.Changes(ctx, "", 0); return err }, nil},
		{"Changes of a zero Engine", func() error { _, _, err := zero.Changes(ctx, "", 0); return err }, host.ErrNoEngine},
		{"Undo, zero values", func() error { _, err := eng.Undo(ctx, ""); return err }, nil},
		{"Undo of a nil Engine", func() error { _, err := nilEngine.Undo(ctx, ""); return err }, host.ErrNoEngine},
		{"Pack of nothing", func() error { _, err := eng.Pack(ctx, nil, nil); return err }, nil},
		{"Pack of a zero Engine", func() error { _, err := zero.Pack(ctx, nil, nil); return err }, host.ErrNoEngine},
		{"Inspect of a nil *FileStore", func() error { _, err := host.Inspect(ctx, nilStore, "a"); return err }, host.ErrNoStore},
		{"Inspect of nil", func() error { _, err := host.Inspect(ctx, nil, ""); return err }, host.ErrNoStore},
		{"Pending of a nil *FileStore", func() error { _, err := host.Pending(ctx, nilStore, "a"); return err }, host.ErrNoStore},
		{"Collect of a nil *FileStore", func() error { _, err := host.Collect(ctx, nilStore, checkpoint.Retention{}); return err }, host.ErrNoStore},
		{"ReadHistory of a nil *FileStore", func() error { return host.ReadHistory(ctx, nilStore, "a", false, nil) }, host.ErrNoStore},
		{"ReadHistory without a function", func() error { return host.ReadHistory(ctx, eng.Store(), "a", false, nil) }, nil},
		{"Run after Close", func() error {
			closed, err := host.NewEngine(ctx, host.Config{})
			if err != nil {
				return err
			}
			closed.Close(ctx)
			_, err = closed.Run(ctx, host.RunOptions{})
			return err
		}, host.ErrEngineClosed},
		{"OpenSession, zero options", func() error { _, err := eng.OpenSession(ctx, host.SessionOptions{}); return err }, host.ErrNoAgentFile},
		{"OpenSession of a zero Engine", func() error { _, err := zero.OpenSession(ctx, host.SessionOptions{}); return err }, host.ErrNoEngine},
		{"Call of a zero Session", func() error { _, err := (&host.Session{}).Call(ctx, "t", nil, nil); return err }, nil},
		{"Close of a zero Session", func() error { return (&host.Session{}).Close() }, nil},
		{"Close of a nil Session", func() error { return (*host.Session)(nil).Close() }, nil},
		{"Children of a nil *FileStore", func() error { _, err := host.Children(ctx, nilStore, "a"); return err }, host.ErrNoStore},
		{"RoundMessages of a nil *FileStore", func() error { _, _, err := host.RoundMessages(ctx, nilStore, "a", 1); return err }, host.ErrNoStore},
		{"RoundMessages of nil", func() error { _, _, err := host.RoundMessages(ctx, nil, "", 0); return err }, host.ErrNoStore},
		{"ListTools of nil", func() error { _, err := host.ListTools(nil); return err }, nil},
		{"ModuleTools of nothing", func() error { _, err := host.ModuleTools("", nil); return err }, nil},
		{"LoadAgentFile of no path", func() error { _, err := host.LoadAgentFile(""); return err }, nil},
		{"ParseAgentFile of nothing", func() error { _, err := host.ParseAgentFile(nil, ""); return err }, nil},
		{"ParseStrategy of nothing", func() error { _, err := host.ParseStrategy("x"); return err }, nil},
		{"ParseSize of nothing", func() error { _, err := host.ParseSize(""); return err }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
		})
	}
	if got := host.RootOf(ctx, nilStore, "a"); got != "a" {
		t.Errorf("RootOf of a nil *FileStore = %q, want the agent itself", got)
	}
	for _, e := range []*host.Engine{zero, nilEngine} {
		if err := e.Close(ctx); err != nil || e.Store() != nil {
			t.Errorf("Close of an engine not made: %v, store %v", err, e.Store())
		}
	}
}

// An agent that exists runs a new prompt without its agent file: it runs
// with the one it was made with.
func TestRunWithoutAgentFileContinues(t *testing.T) {
	x := newExample()
	defer x.close()
	x.runHello("hello-1")
	res, err := x.eng.Run(x.ctx, host.RunOptions{ID: "hello-1", Prompt: "And now?"})
	if err != nil || res.Status != host.StatusDone || res.Rounds != 6 {
		t.Fatalf("%+v, %v; want done after round 6", res, err)
	}
	in, err := host.Inspect(t.Context(), x.store, "hello-1")
	if err != nil {
		t.Fatal(err)
	}
	if m := in.State.Messages[len(in.State.Messages)-2]; m.Text != "And now?" {
		t.Fatalf("the prompt is not in the conversation: %+v", m)
	}
}
