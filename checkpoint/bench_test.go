package checkpoint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// history is a state with n messages of about 200 bytes each.
func history(n int) *State {
	st := NewState("bench", Definition{Workspace: "/ws"}, Labels{}, t0)
	text := strings.Repeat("word ", 40)
	for i := 0; i < n; i++ {
		st.Messages = append(st.Messages, conversation.Message{Role: conversation.RoleAssistant, Text: text})
	}
	st.Round = n / 2
	return st
}

// BenchmarkCommit is the per-round checkpoint: a round's records appended
// to the journal under the agent's lock and one fdatasync (compaction
// included when it falls due, and the commit mark written after it),
// beside the baseline most agent SDKs use: the whole state as JSON, written
// to a temp file, fsynced, renamed, the directory fsynced.
//
//	go test ./checkpoint -run '^$' -bench Commit -benchtime 2000x
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("messages=%d/journal", n), func(b *testing.B) {
			s, _ := OpenFileStore(b.TempDir())
			// Under the agent's lock, as a run commits: each write checks
			// the lock is current, and each commit carries its epoch.
			lock, err := s.Lock("bench", ThisProcess("bench"))
			if err != nil {
				b.Fatal(err)
			}
			defer lock.Unlock()
			log, err := s.Create("bench", history(n))
			if err != nil {
				b.Fatal(err)
			}
			defer log.Close()
			var written int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				round := n/2 + i + 1
				if err := log.Append(roundRecords(round)...); err != nil {
					b.Fatal(err)
				}
				w, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: round})
				if err != nil {
					b.Fatal(err)
				}
				written += w
			}
			b.ReportMetric(float64(written)/float64(b.N), "bytes/round")
		})
		b.Run(fmt.Sprintf("messages=%d/json-snapshot", n), func(b *testing.B) {
			dir := b.TempDir()
			st := history(n)
			var written int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st.Round++
				data, err := json.Marshal(st)
				if err != nil {
					b.Fatal(err)
				}
				if err := writeAtomic(filepath.Join(dir, "state.json"), data); err != nil {
					b.Fatal(err)
				}
				written += int64(len(data))
			}
			b.ReportMetric(float64(written)/float64(b.N), "bytes/round")
		})
	}
}

// BenchmarkRecover10000Rounds is the time to read back an agent of 10,000
// committed rounds: from its newest snapshot and journal as compaction
// leaves them, and, for comparison, from one journal of every round.
//
//	go test ./checkpoint -run '^$' -bench Recover -benchtime 20x
func BenchmarkRecover10000Rounds(b *testing.B) {
	for _, compact := range []bool{true, false} {
		name := "snapshot+journal"
		if !compact {
			name = "journal-only"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			s, _ := OpenFileStore(dir)
			log, err := s.Create("bench", NewState("bench", Definition{}, Labels{}, t0))
			if err != nil {
				b.Fatal(err)
			}
			if !compact {
				log.(*journalLog).snapLen = 1 << 40
			}
			for r := 1; r <= 10000; r++ {
				log.Append(roundRecords(r)...)
				if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: r}); err != nil {
					b.Fatal(err)
				}
			}
			log.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rec, err := s.Read("bench")
				if err != nil || rec.State.Round != 10000 {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			entries, _ := os.ReadDir(filepath.Join(dir, "agents", "bench"))
			var size int64
			for _, e := range entries {
				if fi, err := e.Info(); err == nil {
					size += fi.Size()
				}
			}
			b.ReportMetric(float64(size), "bytes-on-disk")
		})
	}
}

// BenchmarkFdatasync is the floor under any durable commit: 330 bytes
// appended to a file and one fdatasync, the baseline for BenchmarkCommit.
// The other two measure whether preallocated journal segments would pay
// off (RATIONALE.md): "fallocated" appends into space reserved with
// fallocate, "zero-filled" into blocks written with zeros and synced up
// front, so that fdatasync has no metadata to write back.
//
//	go test ./checkpoint -run '^$' -bench Fdatasync -benchtime 2000x
func BenchmarkFdatasync(b *testing.B) {
	for _, layout := range []string{"growing", "fallocated", "zero-filled"} {
		b.Run(layout, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "f"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 330)
			size := int64(b.N+1) * 330
			switch layout {
			case "fallocated":
				if !allocate(f, size) {
					b.Skip("fallocate is not available here")
				}
			case "zero-filled":
				if _, err := f.Write(make([]byte, size)); err != nil {
					b.Fatal(err)
				}
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.WriteAt(buf, int64(i)*330)
				if err := syncData(f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGroupCommit is 64 agents of one process committing rounds at
// once, each from its own goroutine: every agent syncing its own journal
// (the baseline), against one group log whose fdatasyncs all agents share.
// Each agent starts with 1,000 messages, so that compaction, which runs
// in both as it falls due, is as rare as in a long conversation.
//
//	go test ./checkpoint -run '^$' -bench GroupCommit -benchtime 20000x -count 3
func BenchmarkGroupCommit(b *testing.B) {
	const agents = 64
	for _, mode := range []string{"journal-per-agent", "group-commit"} {
		b.Run(mode, func(b *testing.B) {
			var opts []FileStoreOption
			if mode == "group-commit" {
				opts = append(opts, WithGroupCommit())
			}
			s, err := OpenFileStore(b.TempDir(), opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			logs := make([]Log, agents)
			for i := range logs {
				st := history(1000)
				st.Agent, st.Round = fmt.Sprintf("a%02d", i), 0
				if logs[i], err = s.Create(st.Agent, st); err != nil {
					b.Fatal(err)
				}
			}
			per := (b.N + agents - 1) / agents
			errs := make(chan error, agents)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for _, log := range logs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 1; r <= per; r++ {
						log.Append(roundRecords(r)...)
						if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: r}); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			rounds := float64(per * agents)
			b.ReportMetric(rounds/elapsed.Seconds(), "rounds/s")
			syncs := rounds // one fdatasync of its journal per commit
			if s.group != nil {
				syncs = float64(s.group.syncs.Load())
			}
			b.ReportMetric(syncs/rounds, "fsyncs/round")
			for _, log := range logs {
				log.Close()
			}
		})
	}
}

// BenchmarkReadTornTail reads an agent whose journal ends in a torn frame
// (the head of an append a kill -9 cut short) followed by the journal's
// reserved space, zeros: what resume reads after such a crash. Telling a
// torn tail from corruption tries every offset after the damage for a
// valid frame; "reserved" is how much reserved space follows it (a
// journal reserves past its snapshot's size, up to 16 MiB ahead).
//
//	go test ./checkpoint -run '^$' -bench ReadTornTail -benchtime 20x
func BenchmarkReadTornTail(b *testing.B) {
	for _, reserved := range []int{128 << 10, 4 << 20} {
		b.Run(fmt.Sprintf("reserved-%dKiB", reserved>>10), func(b *testing.B) {
			dir := b.TempDir()
			s, err := OpenFileStore(dir)
			must(b, err)
			log := newAgent(b, s, "a1", 3)
			must(b, log.Close())
			name := filepath.Join(dir, "agents", "a1", journalName(0))
			data, err := os.ReadFile(name)
			must(b, err)
			data = data[:len(data)-len(allZeroTail(data))]
			torn := appendFrame(nil, RecTurn, []byte(strings.Repeat("x", 200)))[:100]
			data = append(append(data, torn...), make([]byte, reserved)...)
			must(b, os.WriteFile(name, data, 0o600))
			b.ResetTimer()
			for range b.N {
				if _, err := s.Read("a1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
