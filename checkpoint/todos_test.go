package checkpoint

import (
	"reflect"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// A result's task list and usage become the state's when its round
// commits, and not before; they survive a reopen, and a sub-agent's
// lineage is in its summary.
func TestResultCarriesTodosAndUsageIntoTheRound(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			log := newAgent(t, s, "a", 0)
			list := &TodoList{Items: []Todo{{Text: "plan", Status: TodoDone}, {Text: "write", Status: TodoInProgress}}}
			recs := roundRecords(1)
			recs[2].Result.Todos, recs[2].Result.Usage = list, &conversation.Usage{InputTokens: 100, OutputTokens: 7}
			must(t, log.Append(recs...))
			if st := log.State(); st.Todos != nil || st.Usage.Total() != 0 {
				t.Fatalf("before the commit: todos %+v, usage %+v", st.Todos, st.Usage)
			}
			if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: 1}); err != nil {
				t.Fatal(err)
			}
			must(t, log.Close())
			rec, err := s.Read("a")
			must(t, err)
			if !reflect.DeepEqual(rec.State.Todos, list.Items) || rec.State.Usage.Total() != 12+107 {
				t.Fatalf("after the commit: todos %+v, usage %+v", rec.State.Todos, rec.State.Usage)
			}
		})
	}
}

func TestSummaryNamesTheParent(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			lock, err := s.Lock("p.c-1", ThisProcess("run-1"))
			must(t, err)
			defer lock.Unlock()
			st := NewState("p.c-1", Definition{Workspace: "/ws"}, Labels{}, t0)
			st.Parent = &Parent{Agent: "p", Call: "call_1_0", Name: "c", Depth: 1}
			log, err := s.Create("p.c-1", st)
			must(t, err)
			must(t, log.Close())
			sum, err := s.Summary("p.c-1")
			if err != nil || sum.Parent != "p" {
				t.Fatalf("summary: %+v, %v", sum, err)
			}
			rec, err := s.Read("p.c-1")
			if err != nil || *rec.State.Parent != *st.Parent {
				t.Fatalf("read: %+v, %v", rec.State.Parent, err)
			}
		})
	}
}
