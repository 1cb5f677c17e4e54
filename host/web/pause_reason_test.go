package web

import (
	"net/http"
	"testing"
	"time"

	"github.com/cairnrun/cairn/host"
)

// Regression: a run the server holds, paused through the API, ended with
// the reason "interrupted: context canceled", where one Ctrl-C stops says
// "interrupted: SIGINT". It says it was paused through cairn serve, and a
// run that stopping the server paused says that.
func TestPauseOfAHeldRunSaysItWasPausedThroughServe(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		stop       func(f *fixture)
	}{
		{"pause", "interrupted: paused through cairn serve (web view or API)", func(f *fixture) {
			f.decode(f.post("/api/agents/spin/pause", struct{}{}), http.StatusAccepted, nil)
			f.srv.wg.Wait()
		}},
		{"stop", "interrupted: cairn serve stopped", func(f *fixture) { f.closeWithin(f.t.(*testing.T), 30*time.Second) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{Loopback: true})
			f.spinning()
			tt.stop(f)
			in, err := host.Inspect(t.Context(), f.store, "spin")
			must(t, err)
			runs := in.Runs()
			if last := runs[len(runs)-1]; last.Status != "paused" || last.Reason != tt.want || in.State.Reason != tt.want {
				t.Fatalf("the stopped run: %+v, the agent's reason %q; want paused, %q", last, in.State.Reason, tt.want)
			}
		})
	}
}
