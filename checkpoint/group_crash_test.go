package checkpoint

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

const crashAgents = 64

// TestGroupCrashChild is the child process of TestGroupCommitKilled: 64
// agents commit rounds through one group log until the process is
// killed, and each Commit that returned is printed as "ack <agent>
// <round>". Run by itself it does nothing.
func TestGroupCrashChild(t *testing.T) {
	dir := os.Getenv("CAIRN_GROUP_CHILD")
	if dir == "" {
		t.Skip("the child process of TestGroupCommitKilled")
	}
	// No replacement of the log: the parent then may lose every journal
	// byte after its header, as a power cut may. Compaction at every
	// commit it falls due, so that kills meet it.
	s, err := OpenFileStore(dir, WithGroupCommit(), withGroupLimit(1<<30), WithCompactAfter(0))
	must(t, err)
	var out sync.Mutex
	var wg sync.WaitGroup
	logs := make([]Log, crashAgents)
	for i := range logs {
		logs[i] = newAgent(t, s, fmt.Sprintf("a%02d", i), 0)
	}
	for i, log := range logs {
		id := fmt.Sprintf("a%02d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 1; r <= 5000; r++ {
				if err := log.Append(roundRecords(r)...); err != nil {
					fmt.Println("error", err)
					return
				}
				if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: r}); err != nil {
					fmt.Println("error", err)
					return
				}
				out.Lock()
				fmt.Printf("ack %s %d\n", id, r)
				out.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Println("error: not killed")
}

// A process committing rounds of 64 agents through one group log is
// killed mid-batch. Every agent then recovers a prefix of what it
// committed that holds every round whose Commit had returned, even when
// every journal byte that was never synced is lost too.
func TestGroupCommitKilled(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGroupCrashChild$")
	cmd.Env = append(os.Environ(), "CAIRN_GROUP_CHILD="+dir)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	acked := map[string]int{}
	lines := bufio.NewScanner(stdout)
	n, killAt := 0, 20*crashAgents
	for lines.Scan() {
		var id string
		var r int
		if _, err := fmt.Sscanf(lines.Text(), "ack %s %d", &id, &r); err != nil {
			if strings.HasPrefix(lines.Text(), "error") {
				cmd.Process.Kill()
				t.Fatalf("child: %s", lines.Text())
			}
			continue
		}
		if r != acked[id]+1 {
			t.Errorf("agent %s: round %d acknowledged after %d", id, r, acked[id])
		}
		acked[id] = r
		if n++; n == killAt {
			must(t, cmd.Process.Kill())
		}
	}
	cmd.Wait()
	if n < killAt {
		t.Fatalf("the child acknowledged %d commits and stopped", n)
	}

	check := func(when string) {
		t.Helper()
		s, err := OpenFileStore(dir)
		must(t, err)
		for i := 0; i < crashAgents; i++ {
			id := fmt.Sprintf("a%02d", i)
			rec, err := s.Read(id)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if rec.State.Round < acked[id] {
				t.Fatalf("%s: agent %s recovered round %d, but round %d was acknowledged", when, id, rec.State.Round, acked[id])
			}
			checkRounds(t, id, rec.State, rec.State.Round)
			for _, r := range rec.Tail {
				if r.Round != 0 && r.Round != rec.State.Round+1 {
					t.Fatalf("%s: agent %s: a %s record of round %d after round %d", when, id, r.Type, r.Round, rec.State.Round)
				}
			}
		}
	}
	check("after the kill")
	loseJournals(t, dir)
	check("after losing every unsynced journal byte")
	s := openGroupStore(t, dir)
	if logs := groupLogs(t, dir); len(logs) != 1 {
		t.Fatalf("group logs after adopting: %v", logs)
	}
	check("after adopting the group log")
	must(t, s.Close())
	t.Logf("killed after %d acknowledged commits", n)
}
