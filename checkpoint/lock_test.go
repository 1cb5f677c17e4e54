package checkpoint

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockChild is the role of a child process in TestLockRace: take the lock
// of agent "race" in the store CAIRN_LOCK_CHILD names, and while holding
// it own a marker file that no second holder could also create.
func lockChild() {
	s, err := OpenFileStore(os.Getenv("CAIRN_LOCK_CHILD"))
	if err != nil {
		fmt.Println("error", err)
		return
	}
	run := "run-" + strconv.Itoa(os.Getpid())
	lock, err := s.Lock("race", ThisProcess(run))
	if err != nil {
		if le, ok := err.(*LockedError); ok {
			fmt.Printf("locked %d %s\n", le.Holder.PID, le.Holder.Run)
			return
		}
		fmt.Println("error", err)
		return
	}
	marker := filepath.Join(os.Getenv("CAIRN_LOCK_CHILD"), "held")
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		fmt.Println("BOTH", err)
		return
	}
	f.Close()
	time.Sleep(20 * time.Millisecond)
	os.Remove(marker)
	lock.Unlock()
	fmt.Println("got")
}

func TestMain(m *testing.M) {
	if os.Getenv("CAIRN_LOCK_CHILD") != "" {
		lockChild()
		return
	}
	os.Exit(m.Run())
}

// Two real processes race for one agent's lock, 100 times: never both hold
// it, and the loser's error names the holder's pid and run.
func TestLockRace(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenFileStore(dir); err != nil {
		t.Fatal(err)
	}
	trials := 100
	if testing.Short() {
		trials = 10
	}
	contended := 0
	for i := 0; i < trials; i++ {
		outs, pids := make([]string, 2), make([]int, 2)
		var wg sync.WaitGroup
		for c := 0; c < 2; c++ {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "CAIRN_LOCK_CHILD="+dir)
			var out strings.Builder
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pids[c] = cmd.Process.Pid
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd.Wait()
				outs[c] = strings.TrimSpace(out.String())
			}()
		}
		wg.Wait()
		for c, out := range outs {
			switch {
			case out == "got":
			case strings.HasPrefix(out, "locked "):
				contended++
				want := fmt.Sprintf("locked %d run-%d", pids[1-c], pids[1-c])
				if out != want {
					t.Fatalf("trial %d: the loser said %q, want %q", i, out, want)
				}
			default:
				t.Fatalf("trial %d: child said %q", i, out)
			}
		}
	}
	t.Logf("%d of %d trials contended", contended, trials)
}
