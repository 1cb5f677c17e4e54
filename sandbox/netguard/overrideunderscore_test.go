package netguard

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// cgiServer answers as a server that reads request headers by their CGI
// names (HTTP_X_HTTP_METHOD_OVERRIDE), as WSGI, Rack and PHP frameworks
// do, where "_" and "-" in a header's name are one: it takes a request
// as the method its override asks for, and counts the DELETEs it did.
func cgiServer(t *testing.T) (addr string, deletes *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	deletes = &atomic.Int32{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				method := r.Method
				for k, vs := range r.Header {
					if cgi := "HTTP_" + strings.ToUpper(strings.ReplaceAll(k, "-", "_")); cgi == "HTTP_X_HTTP_METHOD_OVERRIDE" {
						method = strings.ToUpper(vs[0])
					}
				}
				if method == "DELETE" {
					deletes.Add(1)
				}
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"))
			}()
		}
	}()
	return l.Addr().String(), deletes
}

// Regression: a method override header was known by its name with "-"
// alone, so that under a grant of GET and POST a POST with
// X_HTTP_Method_Override: DELETE was sent, and a server that reads
// headers by their CGI names, where "_" is "-", took it as a DELETE. A
// name with "_" for "-" is an override header too.
func TestMethodOverrideWithUnderscoresNeedsItsMethodGranted(t *testing.T) {
	addr, deletes := cgiServer(t)
	c := guard(t, Rules{Allow: []string{addr}, Methods: []string{"GET", "POST"}})
	for _, name := range []string{"X_HTTP_Method_Override", "x_http_method-override", "X_Method_Override", "X_HTTP_METHOD"} {
		h := map[string][]string{name: {"DELETE"}}
		_, err := c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "POST", URL: "http://" + addr + "/item/7", Header: h})
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "DELETE") {
			t.Errorf("a POST with %s: DELETE under a grant of GET and POST: %v", name, err)
		}
		if o := MethodOverrides(h); len(o) != 1 || o[0].Method != "DELETE" {
			t.Errorf("the overrides of %s: DELETE are %v", name, o)
		}
	}
	if n := deletes.Load(); n != 0 {
		t.Errorf("the server took %d requests as DELETE", n)
	}
	if resp, err := c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "POST", URL: "http://" + addr + "/item/7",
		Header: map[string][]string{"X_Request_Id": {"DELETE"}}}); err != nil || string(resp.Body) != "ok" {
		t.Fatalf("a POST with another header with underscores: %+v, %v", resp, err)
	}
}
