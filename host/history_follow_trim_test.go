package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// trimStores are the stores whose Collect trims rounds: a file store and
// a PostgreSQL store, a database of its own on the package's shared
// server.
func trimStores(t *testing.T) map[string]func(t *testing.T) checkpoint.Store {
	return map[string]func(t *testing.T) checkpoint.Store{
		"file": func(t *testing.T) checkpoint.Store {
			s, err := checkpoint.OpenFileStore(t.TempDir())
			must(t, err)
			return s
		},
		"postgres": func(t *testing.T) checkpoint.Store {
			s, err := pgstore.Open(context.Background(), pgtest.Shared(t).NewDatabase(t))
			must(t, err)
			t.Cleanup(s.Close)
			return s
		},
	}
}

// trimRun is a run of agent "a" in a store, writing its rounds' lines to
// the history as a run does, and what it wrote.
type trimRun struct {
	t     *testing.T
	s     checkpoint.Store
	lock  checkpoint.Lock
	log   checkpoint.Log
	run   string
	lines []string // every line of the history, in order
}

func startTrimRun(t *testing.T, s checkpoint.Store, run string, lines []string) *trimRun {
	t.Helper()
	lock, err := s.Lock("a", checkpoint.ThisProcess(run))
	must(t, err)
	r := &trimRun{t: t, s: s, lock: lock, run: run, lines: lines}
	if s.Exists("a") {
		_, r.log, err = s.Open("a")
	} else {
		r.log, err = s.Create("a", checkpoint.NewState("a", checkpoint.Definition{Workspace: "/ws"}, checkpoint.Labels{}, time.Now()))
	}
	must(t, err)
	r.write(fmt.Sprintf(`{"type":"run_start","time":%q,"agent":"a","run":%q}`, r.now(), run))
	return r
}

// now is a time of its own for each line, as a run's are.
func (r *trimRun) now() string {
	return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(len(r.lines)) * time.Millisecond).Format(time.RFC3339Nano)
}

func (r *trimRun) write(lines ...string) {
	w, err := r.s.Events("a")
	must(r.t, err)
	for _, line := range lines {
		_, err := io.WriteString(w, line+"\n")
		must(r.t, err)
		r.lines = append(r.lines, line)
	}
	must(r.t, w.Close())
}

// round commits the next round and writes its lines.
func (r *trimRun) round() int {
	n := r.log.State().Round + 1
	call := fmt.Sprintf("call_%d", n)
	turn := conversation.Message{Role: conversation.RoleAssistant, Text: fmt.Sprintf("turn %d", n),
		ToolCalls: []conversation.ToolCall{{ID: call, Name: "read_file", Input: `{}`}}}
	must(r.t, r.log.Append(checkpoint.Record{Type: checkpoint.RecTurn, Time: time.Now(), Round: n, Message: &turn},
		checkpoint.Record{Type: checkpoint.RecResult, Time: time.Now(), Round: n, Call: call, Tool: "read_file", Result: &checkpoint.Result{Output: "ok"}}))
	_, err := r.log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: time.Now(), Round: n})
	must(r.t, err)
	for _, typ := range []string{"model_turn", "tool_end", "round_end"} {
		r.write(fmt.Sprintf(`{"type":%q,"time":%q,"agent":"a","run":%q,"round":%d}`, typ, r.now(), r.run, n))
	}
	return n
}

// end ends the run and lets the agent go.
func (r *trimRun) end() {
	r.write(fmt.Sprintf(`{"type":"run_end","time":%q,"agent":"a","run":%q}`, r.now(), r.run))
	must(r.t, r.log.Close())
	must(r.t, r.lock.Unlock())
}

// trim is `cairn gc --keep-rounds rounds`.
func trim(t *testing.T, s checkpoint.Store, rounds int) {
	t.Helper()
	got, err := s.(interface {
		Collect(checkpoint.Retention) (*checkpoint.Collected, error)
	}).Collect(checkpoint.Retention{Rounds: rounds})
	must(t, err)
	if len(got.Trimmed) == 0 {
		t.Fatalf("gc trimmed nothing: %+v", got)
	}
}

// followAcross follows agent "a" while run goes on, holds the follower
// at the line after which wait is true until during has run (the run's
// end and a trim, say), and returns every line the follower gave.
func followAcross(t *testing.T, s checkpoint.Store, wait func(line string) bool, during func()) []string {
	t.Helper()
	held, go_ := make(chan struct{}), make(chan struct{})
	var got []string
	done := make(chan error, 1)
	go func() {
		once := false
		done <- ReadHistory(t.Context(), s, "a", true, func(_ Event, line []byte) error {
			got = append(got, string(line))
			if !once && wait(string(line)) {
				once = true
				close(held)
				<-go_
			}
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("the follower ended before the line it waits at: %v", err)
	}
	during()
	close(go_)
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the follower did not end")
	}
	return got
}

// sameFollow fails unless got is what a follower of the history all
// may give: its lines in order, none twice; where lines it had not read
// were trimmed before it read them, the trim's warning in their place
// and the lines after them.
func sameFollow(t *testing.T, got, all []string) {
	t.Helper()
	i := 0
	for k, line := range got {
		var e Event
		if json.Unmarshal([]byte(line), &e) == nil && e.Trimmed() && int(e.Removed) >= i {
			i = int(e.Removed)
			continue
		}
		if i >= len(all) || all[i] != line {
			t.Fatalf("the follower's line %d is %.120q, where the history's line %d is %.120q;\nthe follower gave:\n%s",
				k+1, line, i+1, at(all, i), strings.Join(got, "\n"))
		}
		i++
	}
	if i != len(all) {
		t.Fatalf("the follower gave %d lines of the history's %d; the last it did not give: %.120q", i, len(all), all[len(all)-1])
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

// Regression: a follower of a PostgreSQL agent (`cairn events --follow`,
// `cairn serve`'s stream, the web view) read on by byte offset, which
// `cairn gc --keep-rounds` moves: polling after a run had ended and a
// trim had run, it lost the run's last lines. A follower across a trim
// neither loses nor repeats a line, on every store.
func TestFollowerAcrossATrimLosesNoLine(t *testing.T) {
	for name, open := range trimStores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			run := startTrimRun(t, s, "r1", nil)
			for range 10 {
				run.round()
			}
			got := followAcross(t, s, func(line string) bool {
				return strings.Contains(line, `"round_end"`) && strings.Contains(line, `"round":10`)
			}, func() {
				run.round()
				run.end()
				trim(t, s, 3)
			})
			sameFollow(t, got, run.lines)
		})
	}
}

// A follower whose place the trim removed, the lines after it not read
// yet, is told so: the trim's warning stands in the place of the lines
// removed, then come the lines kept, none lost that it does not say.
func TestFollowerBehindATrimIsToldWhatItRemoved(t *testing.T) {
	for name, open := range trimStores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			run := startTrimRun(t, s, "r1", nil)
			for range 5 {
				run.round()
			}
			got := followAcross(t, s, func(line string) bool {
				return strings.Contains(line, `"round_end"`) && strings.Contains(line, `"round":5`)
			}, func() {
				for range 6 {
					run.round()
				}
				run.end()
				trim(t, s, 3)
			})
			sameFollow(t, got, run.lines)
		})
	}
}

// Regression: on a file store a follower read on in the history file it
// had opened, which a trim replaces: when the run it followed ended, gc
// trimmed and a new run ran before its next look, it read on in the file
// no one writes any more and gave none of the new run's lines.
func TestFollowerAcrossATrimSeesTheNextRun(t *testing.T) {
	for name, open := range trimStores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			run := startTrimRun(t, s, "r1", nil)
			for range 10 {
				run.round()
			}
			var next *trimRun
			got := followAcross(t, s, func(line string) bool {
				return strings.Contains(line, `"round_end"`) && strings.Contains(line, `"round":10`)
			}, func() {
				run.round()
				run.end()
				trim(t, s, 3)
				next = startTrimRun(t, s, "r2", run.lines)
				next.round()
				next.end()
			})
			sameFollow(t, got, next.lines)
		})
	}
}

// A follower of a store whose reader is a copy reads again only the end
// of a long last line to check it is still there, and goes on after it:
// every line added later comes once, a long one written in two pieces
// too, the follower looking between them.
func TestFollowerAfterALongLineGivesEachLineOnce(t *testing.T) {
	s := checkpoint.NewMemStore()
	run := startTrimRun(t, s, "r1", nil)
	long := func(n int) string {
		return fmt.Sprintf(`{"type":"warning","time":%q,"agent":"a","run":"r1","text":"%d %s"}`, run.now(), n, strings.Repeat("x", 3*lastChecked))
	}
	first := long(1)
	run.write(first)
	second := long(2)
	end := fmt.Sprintf(`{"type":"run_end","time":%q,"agent":"a","run":"r1"}`, run.now())
	ended := make(chan error, 1)
	got := followAcross(t, s, func(line string) bool { return line == first }, func() {
		w, err := s.Events("a")
		must(t, err)
		_, err = io.WriteString(w, second[:lastChecked+7])
		must(t, err)
		must(t, w.Close())
		go func() {
			time.Sleep(3 * followPoll) // the follower looks while the line is cut short
			w, err := s.Events("a")
			if err == nil {
				_, err = io.WriteString(w, second[lastChecked+7:]+"\n"+end+"\n")
				err = errors.Join(err, w.Close())
			}
			ended <- errors.Join(err, run.log.Close(), run.lock.Unlock())
		}()
	})
	must(t, <-ended)
	sameFollow(t, got, append(run.lines, second, end))
}
