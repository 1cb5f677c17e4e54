package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// browserAddr gives a browser an address it can open: the loopback
// address of the family asked for when the server listens on every
// address, else the address itself.
func TestBrowserAddrOfAnUnspecifiedHost(t *testing.T) {
	for _, tt := range []struct {
		asked, addr, open string
		every             bool
	}{
		{"0.0.0.0:7879", "[::]:7879", "127.0.0.1:7879", true}, // Go listens on both families for 0.0.0.0
		{"0.0.0.0:7879", "0.0.0.0:7879", "127.0.0.1:7879", true},
		{":7879", "[::]:7879", "127.0.0.1:7879", true},
		{"[::]:7879", "[::]:7879", "[::1]:7879", true},
		{"127.0.0.1:7878", "127.0.0.1:7878", "127.0.0.1:7878", false},
		{"[::1]:7878", "[::1]:7878", "[::1]:7878", false},
		{"10.1.2.3:80", "10.1.2.3:80", "10.1.2.3:80", false},
	} {
		open, every := browserAddr(tt.asked, tt.addr)
		if open != tt.open || every != tt.every {
			t.Errorf("browserAddr(%q, %q) = %q, %v; want %q, %v", tt.asked, tt.addr, open, every, tt.open, tt.every)
		}
	}
}

// `cairn serve --addr 0.0.0.0:PORT` prints links a browser on this
// machine can open, on the loopback address, and says so, naming this
// machine for a browser on another; it once printed http://[::]:PORT,
// which no browser opens. The printed login link works.
func TestServeUnspecifiedAddrPrintsOpenableURL(t *testing.T) {
	srv := exec.Command(cairnBinary(t), "serve", "--store", t.TempDir(), "--cache", cacheForTests(t), "--addr", "0.0.0.0:0")
	stdout, err := srv.StdoutPipe()
	must(t, err)
	must(t, srv.Start())
	defer srv.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var base, login, every string
	for lines.Scan() {
		l := lines.Text()
		if strings.HasPrefix(l, "beyond loopback") {
			break // the last line but --read-only's
		}
		if _, url, ok := strings.Cut(l, " on "); ok && strings.HasPrefix(l, "cairn serve:") {
			base = url
		}
		if url, ok := strings.CutPrefix(l, "open (once): "); ok {
			login = url
		}
		if strings.HasPrefix(l, "listening on every address") {
			every = l
		}
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasPrefix(login, base+"/login?once=") {
		t.Fatalf("serve on 0.0.0.0 printed %q and the login link %q, want them on 127.0.0.1", base, login)
	}
	name, _ := os.Hostname()
	if !strings.Contains(every, "loopback") || !strings.Contains(every, "http://"+name+":") {
		t.Fatalf("serve on 0.0.0.0 said %q, want it to say the links are on loopback and name this machine", every)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(login)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the printed login link: %s", resp.Status)
	}
	must(t, srv.Process.Signal(syscall.SIGINT))
	waitExit(t, srv, "cairn serve did not stop within a minute of SIGINT")
}
