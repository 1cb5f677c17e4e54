package netguard

import (
	"context"
	"net"
	"net/http"
	"testing"
)

// Regression: a request to a URL without a port went out with the
// scheme's default port in its Host header ("api.example.com:443" for
// https://api.example.com/), as the guest never wrote it and as no
// common client sends it: a server that matches its virtual hosts, or
// checks a signature over the Host header (AWS's SigV4), by the name
// alone refused it. The Host header is the URL's host, with its port
// only when that is not the scheme's default; and the secret for the
// host's default port is still set.
func TestHostHeaderHasNoDefaultPort(t *testing.T) {
	// What the request is sent with, where no listener on a default
	// port can be had.
	g := guard(t, Rules{Allow: []string{"api.example.com", "api.example.com:8443", "[2001:db8::1]"}})
	for raw, want := range map[string]string{"https://api.example.com/x": "api.example.com", "http://API.example.com.:80/": "api.example.com",
		"https://api.example.com:8443/": "api.example.com:8443", "https://[2001:db8::1]:443/": "[2001:db8::1]", "http://[2001:db8::1]/": "[2001:db8::1]"} {
		if err := g.Admit(get(raw)); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if g.url.Host != want {
			t.Errorf("%s is sent with Host %q, want %q", raw, g.url.Host, want)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.77:80") // the default port takes privilege
	if err != nil {
		t.Skipf("no listener on port 80: %v", err)
	}
	type seen struct{ host, key string }
	got := make(chan seen, 4)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Host, r.Header.Get("X-Key")}
	})}
	go srv.Serve(ln)
	defer srv.Close()
	s := newServer(t, hello)
	c := guard(t, Rules{Allow: []string{"127.0.0.77", s.hostPort()}, Secrets: []Secret{{Host: "127.0.0.77", Header: "X-Key", Value: "k"}}})
	for url, want := range map[string]seen{
		"http://127.0.0.77/x": {"127.0.0.77", "k"}, "http://127.0.0.77:80/x": {"127.0.0.77", "k"}, "http://127.0.0.77./x": {"127.0.0.77", "k"},
	} {
		if _, err := c.RoundTrip(context.Background(), get(url)); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if g := <-got; g != want {
			t.Errorf("%s: the server saw Host %q and X-Key %q, want %q and %q", url, g.host, g.key, want.host, want.key)
		}
	}
	if _, err := c.RoundTrip(context.Background(), get(s.URL+"/x")); err != nil {
		t.Fatal(err)
	}
}
