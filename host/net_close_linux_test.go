package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
)

// Regression: a run's network grants were never closed, so the
// connections its requests kept alive, those that carried a secret
// among them, stayed open after the run ended, until net/http's idle
// timeout. They are closed when the run ends.
func TestNetConnectionsCloseWhenTheRunEnds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				br := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			}()
		}
	}()
	addr := ln.Addr().String()
	t.Setenv("CAIRN_TEST_TOKEN", testToken)
	grant := fmt.Sprintf(`{net: {allow: ["%s"], secrets: [{host: "%s", header: Authorization, value: "Bearer ${CAIRN_TEST_TOKEN}"}]}}`, addr, addr)
	af := netAgent(t, grant, fmt.Sprintf(`{url: "http://%s/a"}`, addr), fmt.Sprintf(`{url: "http://%s/b"}`, addr))
	eng, _ := fileEngine(t)
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(conns) == 0 {
		t.Fatal("the server took no connection")
	}
	for i, c := range conns {
		// The run closed its connections before it returned: the
		// server's side finds their end at once, with a read that does
		// not wait (a read of none, 0, where an open one has nothing to
		// read, EAGAIN).
		raw, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var n int
		var rerr error
		raw.Control(func(fd uintptr) { // beside the server's read, which waits
			n, _, rerr = syscall.Recvfrom(int(fd), make([]byte, 1), syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		})
		if errors.Is(rerr, syscall.EAGAIN) {
			t.Errorf("connection %d of %d is still open after the run ended", i+1, len(conns))
		} else if n != 0 || rerr != nil {
			t.Errorf("connection %d of %d: %d bytes to read, %v", i+1, len(conns), n, rerr)
		}
		c.Close()
	}
}
