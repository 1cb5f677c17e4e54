package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// hangServer answers GET /ok at once and holds POST /hang until the test
// ends, counting the requests of each path.
type hangServer struct {
	*httptest.Server
	mu     sync.Mutex
	hits   map[string]int
	hung   chan struct{}
	unhang chan struct{}
}

func newHangServer(t *testing.T) *hangServer {
	s := &hangServer{hits: map[string]int{}, hung: make(chan struct{}, 4), unhang: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		s.mu.Lock()
		s.hits[r.Method+" "+r.URL.Path]++
		s.mu.Unlock()
		if r.URL.Path == "/hang" {
			s.hung <- struct{}{}
			<-s.unhang
			return
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(func() { close(s.unhang); s.Close() })
	return s
}

func (s *hangServer) count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[key]
}

// netSealEvent is what this test reads of resume's report.
type netSealEvent struct {
	Finished []string `json:"finished"`
	Sealed   []struct {
		Call           string `json:"call"`
		Effects        string `json:"effects"`
		Recommendation string `json:"recommendation"`
		Net            []struct {
			Method   string `json:"method"`
			Sent     bool   `json:"sent"`
			Received bool   `json:"received"`
		} `json:"net"`
	} `json:"sealed"`
}

// A real cairn process is killed with SIGKILL while one call of a round
// waits for the response to a POST and another call's GET has been
// answered, journaled and its result kept. cairn show lists the POST as
// sent and its response as not received; resume keeps the finished call
// without sending its GET again, seals the waiting one saying the POST
// was sent and not answered, and recommends checking the remote side
// before retrying; the server saw each request once.
func TestKillDashNineWhileAToolWaitsForAResponse(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := t.TempDir()
	packedModule(t, bin, dir, "github.com/cairnrun/cairn/host/testdata/nettool")
	s := newHangServer(t)
	hostPort := strings.TrimPrefix(s.URL, "http://")
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(fmt.Sprintf(`turns:
  - tool_calls: [{name: http, input: {url: "%s/ok"}}, {name: http, input: {method: POST, url: "%s/hang", body: order-1}}]
  - text: finished
`, s.URL, s.URL)), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(fmt.Sprintf(`
name: netcrash
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - {module: nettool.wasm, grant: {net: {allow: ["%s"], methods: [GET, POST]}}}
`, hostPort)), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	store, cache := filepath.Join(dir, "store"), cacheForTests(t)

	cmd := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "n", "-f", filepath.Join(dir, "agent.yaml"))
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	ended := make(chan struct{})
	go func() {
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			if strings.Contains(sc.Text(), `"tool_end"`) && strings.Contains(sc.Text(), `"call_1_0"`) {
				close(ended)
			}
		}
	}()
	<-s.hung // the POST reached the server and waits for its answer
	<-ended  // the GET's call finished, its result journaled
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	show, err := exec.Command(bin, "show", "--store", store, "n").CombinedOutput()
	if err != nil || !strings.Contains(string(show), "call_1_1: POST "+s.URL+"/hang → sent, response not received") {
		t.Fatalf("cairn show: %v\n%s", err, show)
	}
	// Replay would send the POST again: resume keeps the round instead.
	out, err := exec.Command(bin, "resume", "--strategy", "replay", "--json", "--store", store, "--cache", cache, "n").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "not replayed") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	var report *netSealEvent
	for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); {
		var e netSealEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil && len(e.Sealed) > 0 {
			report = &e
		}
	}
	if report == nil || len(report.Sealed) != 1 || strings.Join(report.Finished, ",") != "call_1_0" {
		t.Fatalf("resume's report: %+v\n%s", report, out)
	}
	seal := report.Sealed[0]
	if seal.Call != "call_1_1" || len(seal.Net) != 1 || seal.Net[0].Method != "POST" || !seal.Net[0].Sent || seal.Net[0].Received ||
		!strings.Contains(seal.Recommendation, "check the remote side") {
		t.Fatalf("seal: %+v", seal)
	}
	logOut, err := exec.Command(bin, "log", "--store", store, "n").CombinedOutput()
	if err != nil || !strings.Contains(string(logOut), "net GET "+s.URL+"/ok → 200, 2 bytes") {
		t.Errorf("cairn log does not list the kept call's request: %v\n%s", err, logOut)
	}
	// Regression: the sealed call's result kept none of its exchanges, so
	// the POST it sent was in neither the log nor the agent's usage.
	if !strings.Contains(string(logOut), "net POST "+s.URL+"/hang → sent, response not received") {
		t.Errorf("cairn log does not list the sealed call's request:\n%s", logOut)
	}
	showJSON, err := exec.Command(bin, "show", "--json", "--store", store, "n").Output()
	var shown struct {
		Usage struct {
			NetRequests  int64 `json:"net_requests"`
			NetSentBytes int64 `json:"net_sent_bytes"`
		} `json:"usage"`
	}
	if err != nil || json.Unmarshal(showJSON, &shown) != nil {
		t.Fatalf("cairn show --json: %v\n%s", err, showJSON)
	}
	if u := shown.Usage; u.NetRequests != 2 || u.NetSentBytes != int64(len("order-1")) {
		t.Errorf("the agent's usage counts %d requests, %d bytes sent; want 2 and the POST's body\n%s", u.NetRequests, u.NetSentBytes, showJSON)
	}
	if s.count("GET /ok") != 1 || s.count("POST /hang") != 1 {
		t.Fatalf("the server saw %v; every request once", s.hits)
	}
}
