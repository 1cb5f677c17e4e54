package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/internal/view"
)

// A real `cairn serve` process: it prints its address, token and login
// link; its events stream is what `cairn events --json` prints, byte for
// byte; a state change with the printed token works; the first SIGINT
// ends it cleanly.
func TestServeStreamsWhatEventsPrints(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--json", "--id", "sv"}, args...)...); code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	_, want, _ := cairn(t, "events", "--json", "--store", store, "sv")
	srv := exec.Command(cairnBinary(t), "serve", "--store", store, "--cache", cacheForTests(t), "--addr", "127.0.0.1:0")
	stdout, err := srv.StdoutPipe()
	must(t, err)
	must(t, srv.Start())
	defer srv.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var base, token string
	for lines.Scan() && (base == "" || token == "") {
		l := lines.Text()
		if _, url, ok := strings.Cut(l, " on "); ok && strings.HasPrefix(l, "cairn serve:") {
			base = url
		}
		token, _ = strings.CutPrefix(l, "token: ")
		if token == l {
			token = ""
		}
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") || len(token) != 64 {
		t.Fatalf("serve printed %q and token %q", base, token)
	}
	resp, err := http.Get(base + "/api/agents/sv/events?follow=1")
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got strings.Builder
	for _, l := range strings.Split(string(body), "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok && d != "" {
			got.WriteString(d + "\n")
		}
	}
	if got.String() != want {
		t.Fatalf("SSE data:\n%s\ncairn events --json:\n%s", got.String(), want)
	}
	// The API's runs and statuses are the command line's.
	_, runs, _ := cairn(t, "runs", "--json", "--store", store, "sv")
	if got := getJSONLines(t, base+"/api/agents/sv/runs"); got != normalized(t, runs) {
		t.Fatalf("API runs:\n%s\ncairn runs --json:\n%s", got, runs)
	}
	_, ls, _ := cairn(t, "ls", "--json", "--store", store)
	var line view.AgentLine
	must(t, json.Unmarshal([]byte(ls), &line))
	if got := getJSONLines(t, base+"/api/agents"); !strings.Contains(got, `"status":"`+line.Status+`"`) {
		t.Fatalf("API agents %s, cairn ls --json %s", got, ls)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/api/agents/sv/snapshot", strings.NewReader(`{"label":"web"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("snapshot with the printed token: %s", resp.Status)
	}
	must(t, srv.Process.Signal(syscall.SIGINT))
	waitExit(t, srv, "cairn serve did not stop within a minute of SIGINT")
	if code := srv.ProcessState.ExitCode(); code != exitDone {
		t.Fatalf("serve exited %d after SIGINT", code)
	}
	if _, out, _ := cairn(t, "show", "--store", store, "sv"); !strings.Contains(out, "bookmark   web: round 5") {
		t.Fatalf("show after the API's snapshot:\n%s", out)
	}
}

// normalized re-encodes JSON Lines with their keys in order.
func normalized(t *testing.T, lines string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		var v any
		must(t, json.Unmarshal([]byte(l), &v))
		out, _ := json.Marshal(v)
		b.Write(out)
		b.WriteByte('\n')
	}
	return b.String()
}

// getJSONLines GETs a JSON array and returns its elements as JSON Lines,
// each with its keys in order.
func getJSONLines(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	must(t, err)
	defer resp.Body.Close()
	var items []json.RawMessage
	must(t, json.NewDecoder(resp.Body).Decode(&items))
	var b strings.Builder
	for _, it := range items {
		var v any
		must(t, json.Unmarshal(it, &v))
		line, _ := json.Marshal(v)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}
