package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// procStat is the state and parent of the process pid, from /proc; ok is
// false once it is gone.
func procStat(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+4 >= len(b) {
		return 0, 0, false
	}
	var st string
	if _, err := fmt.Sscan(string(b[i+2:]), &st, &ppid); err != nil {
		return 0, 0, false
	}
	return st[0], ppid, true
}

// childOf waits for a process whose parent is pid, and returns it.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			child, _ := strconv.Atoi(filepath.Base(p))
			// Once it runs the program: a process forked runs the
			// parent's until then.
			args, _ := os.ReadFile(filepath.Join(p, "cmdline"))
			if _, ppid, ok := procStat(child); ok && ppid == pid && !bytes.Contains(args, []byte("-test.run")) {
				return child
			}
		}
	}
	t.Fatalf("process %d started no process to compile apart", pid)
	return 0
}

// Regression: the process compiling a module apart went on after the
// process that started it was killed (kill -9, or the kernel's OOM
// killer), past the compile's time limit, which only its parent kept;
// and a cairn started again compiled the module beside it, twice the
// memory under the limit compiling apart is for. It ends with its parent.
func TestCompileApartEndsWithItsParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), apartParentEnv+"="+filepath.Join("..", "examples", "tools", "textstats", "textstats.wasm"),
		apartCacheEnv+"="+t.TempDir())
	must(t, parent.Start())
	child := childOf(t, parent.Process.Pid)
	time.Sleep(300 * time.Millisecond) // for it to read the module and begin
	must(t, parent.Process.Kill())
	parent.Wait()
	deadline := time.Now().Add(time.Second)
	for {
		state, _, ok := procStat(child)
		if !ok || state == 'Z' {
			return
		}
		if time.Now().After(deadline) {
			p, _ := os.FindProcess(child)
			p.Kill()
			t.Fatalf("the process compiling apart (%d, state %c) still runs a second after its parent was killed", child, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
