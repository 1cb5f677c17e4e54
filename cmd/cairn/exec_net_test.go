package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// cairn exec --net lets a module reach what it names and nothing else; a
// module that imports the network is refused without it.
func TestExecNet(t *testing.T) {
	t.Parallel()
	mod := wasiGuest(t, "netget")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "pong") }))
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	cache := cacheForTests(t)

	code, out, errOut := cairnProcess(t, "exec", "--cache", cache, "--net", hostPort, mod, srv.URL+"/ping")
	if code != 0 || out != "200 pong\n" {
		t.Fatalf("granted: exit %d, %q, stderr %s", code, out, errOut)
	}
	code, _, errOut = cairnProcess(t, "exec", "--cache", cache, "--net", "api.example.com", mod, srv.URL)
	if code != 1 || !strings.Contains(errOut, "not in the allow list") {
		t.Fatalf("not allowed: exit %d, stderr %s", code, errOut)
	}
	code, _, errOut = cairnProcess(t, "exec", "--cache", cache, "--net", "*", mod, "http://169.254.169.254/latest/meta-data/")
	if code != 1 || !strings.Contains(errOut, "refused") {
		t.Fatalf("metadata: exit %d, stderr %s", code, errOut)
	}
	code, _, errOut = cairnProcess(t, "exec", "--cache", cache, mod, srv.URL)
	if code != 1 || !strings.Contains(errOut, "network grant") {
		t.Fatalf("no --net: exit %d, stderr %s", code, errOut)
	}
}
