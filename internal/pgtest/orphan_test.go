package pgtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Regression: a test process that died before its cleanups ran (killed,
// or ended by go test's -timeout panic) left its servers running, and
// their directories behind, for as long as the machine ran: each held its
// memory and up to 400 connections' worth of slots. A server is now
// stopped, and its directory removed, once the process that started it
// is gone.
func TestServerStoppedWhenItsTestProcessDies(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") == "1" {
		s := Start(t)
		fmt.Printf("%s %d\n", s.dir, s.postmaster(t))
		select {} // until killed
	}
	if os.Getenv("CAIRN_TEST_POSTGRES") != "" {
		t.Skip("this test starts servers of its own, not CAIRN_TEST_POSTGRES")
	}
	findBin(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerStoppedWhenItsTestProcessDies$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PGTEST_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child test said nothing of its server: %v", err)
	}
	var dir string
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(line), &dir, &pid); err != nil {
		t.Fatalf("the child test said %q: %v", line, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	// A guard for a hang, not a measure: the server is stopped at once.
	for guard := time.Now().Add(2 * time.Minute); syscall.Kill(pid, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(guard) {
			// Stop it, as the test's cleanup would have.
			left := &Server{dir: dir, bin: findBin(t)}
			left.setUser(t)
			left.remove()
			t.Fatalf("the server (postmaster %d, %s) still runs two minutes after its test process was killed", pid, dir)
		}
	}
	for guard := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "data")); os.IsNotExist(err) {
			break
		}
		if time.Now().After(guard) {
			t.Fatalf("the server's directory %s is left two minutes after its test process was killed", dir)
		}
	}
}
