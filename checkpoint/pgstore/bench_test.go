package pgstore_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// benchStores are the stores the benchmarks compare, in the same run: the
// file store in a temporary directory and PostgreSQL (fsync and
// synchronous_commit on) on a unix socket, with group commit and without.
func benchStores(b *testing.B) []struct {
	name string
	s    checkpoint.Store
} {
	fs, err := checkpoint.OpenFileStore(b.TempDir())
	must(b, err)
	return []struct {
		name string
		s    checkpoint.Store
	}{{"file", fs}, {"postgres", open(b, sharedURL(b))}, {"postgres-alone", open(b, sharedURL(b), pgstore.WithoutGroupCommit())}}
}

var benchIDs atomic.Int64

// benchID is an agent id no benchmark has used: a benchmark's function
// runs more than once on one store.
func benchID() string { return fmt.Sprintf("bench-%d", benchIDs.Add(1)) }

// benchState is an agent with n messages of about 200 bytes.
func benchState(id string, n int) *checkpoint.State {
	st := newState(id)
	text := strings.Repeat("word ", 40)
	for range n {
		st.Messages = append(st.Messages, conversation.Message{Role: conversation.RoleAssistant, Text: text})
	}
	return st
}

// BenchmarkCommit is one round as the host writes it: the turn, the
// call's executing phase and its result each appended on its own, then
// the Commit (compaction included when due).
//
//	go test ./checkpoint/pgstore -run '^$' -bench 'Commit$' -benchtime 2000x
func BenchmarkCommit(b *testing.B) {
	for _, st := range benchStores(b) {
		for _, n := range []int{10, 1000} {
			b.Run(fmt.Sprintf("%s/messages=%d", st.name, n), func(b *testing.B) {
				id := benchID()
				lock, err := st.s.Lock(id, checkpoint.ThisProcess("bench"))
				must(b, err)
				defer lock.Unlock()
				log, err := st.s.Create(id, benchState(id, n))
				must(b, err)
				defer log.Close()
				b.ResetTimer()
				for i := range b.N {
					for _, rec := range roundRecords(i + 1) {
						must(b, log.Append(rec))
					}
					if _, err := log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: i + 1}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkCommit64Agents is 64 agents of one process committing at once,
// each on its own goroutine; ns/op is per round of one agent.
//
//	go test ./checkpoint/pgstore -run '^$' -bench 'Commit64' -benchtime 20000x
func BenchmarkCommit64Agents(b *testing.B) {
	for _, st := range benchStores(b) {
		b.Run(st.name, func(b *testing.B) {
			const agents = 64
			logs := make([]checkpoint.Log, agents)
			for a := range logs {
				id := benchID()
				lock, err := st.s.Lock(id, checkpoint.ThisProcess("bench"))
				must(b, err)
				defer lock.Unlock()
				logs[a], err = st.s.Create(id, benchState(id, 10))
				must(b, err)
				defer logs[a].Close()
			}
			b.ResetTimer()
			var wg sync.WaitGroup
			for a, log := range logs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range b.N / agents {
						round := i + 1
						if err := log.Append(roundRecords(round)...); err != nil {
							b.Error(err)
							return
						}
						if _, err := log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: round}); err != nil {
							b.Errorf("agent %d: %v", a, err)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

// BenchmarkResume10000Rounds reads back an agent of 10,000 committed
// rounds, as Open does before a resume.
//
//	go test ./checkpoint/pgstore -run '^$' -bench Resume -benchtime 20x
func BenchmarkResume10000Rounds(b *testing.B) {
	for _, st := range benchStores(b) {
		b.Run(st.name, func(b *testing.B) {
			id := benchID()
			lock, err := st.s.Lock(id, checkpoint.ThisProcess("bench"))
			must(b, err)
			log, err := st.s.Create(id, newState(id))
			must(b, err)
			for r := 1; r <= 10000; r++ {
				must(b, log.Append(roundRecords(r)...))
				if _, err := log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: r}); err != nil {
					b.Fatal(err)
				}
			}
			log.Close()
			lock.Unlock()
			b.ResetTimer()
			for range b.N {
				rec, err := st.s.Read(id)
				if err != nil || rec.State.Round != 10000 {
					b.Fatalf("round %v: %v", rec, err)
				}
			}
		})
	}
}
