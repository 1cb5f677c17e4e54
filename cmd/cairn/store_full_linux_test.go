package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// A store whose disk fills up in the middle of a run once stopped it with
// exit 1 and only "record the end of run …: no space left on device": not
// why the run stopped, nor what to do. The run now stops at its last
// committed round with exit 3, says the store's disk is full and to free
// space, and `cairn resume` goes on once there is room.
func TestStoreDiskFullMidRunPausesAndResumes(t *testing.T) {
	store := t.TempDir()
	if err := syscall.Mount("tmpfs", store, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("a store whose disk fills is a tmpfs mounted for the test, which needs root: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(store, syscall.MNT_DETACH) })
	filler := filepath.Join(store, "filler")

	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		requests++
		n := requests
		mu.Unlock()
		if n == 2 {
			fillDisk(t, filler) // round 2's turn finds no room
		}
		delta, finish := fmt.Sprintf(`{"tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"list_dir","arguments":"{}"}}]}`, n), "tool_calls"
		if n == 2 {
			// A turn longer than the room the journal's file keeps ahead.
			delta = `{"content":"` + strings.Repeat("x", 512<<10) + `",` + delta[1:]
		}
		if n >= 4 {
			delta, finish = `{"content":"done"}`, "stop"
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%q}]}\n\ndata: [DONE]\n\n", delta, finish)
	}))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`name: full
model: {provider: openai, name: fake, base_url: `+srv.URL+`/v1, max_retries: -1}
prompt: look around
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
`), 0o644))
	t.Setenv("OPENAI_API_KEY", "")

	code, _, errOut := cairn(t, "run", "-f", agent, "--id", "full", "--store", store, "--cache", cacheForTests(t))
	if code != exitPaused {
		t.Errorf("run on a disk that fills: exit %d, want %d (paused); stderr: %s", code, exitPaused, errOut)
	}
	for _, want := range []string{"no space left on device", "free space", "cairn resume full"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("run's stderr lacks %q:\n%s", want, errOut)
		}
	}
	must(t, os.Remove(filler))
	code, out, errOut := cairn(t, "show", "full", "--store", store)
	if code != exitDone || !strings.Contains(out, "boundary   round 1 ") {
		t.Errorf("show after the disk filled: exit %d %s\n%s", code, errOut, out)
	}
	code, out, errOut = cairn(t, "resume", "full", "--store", store, "--cache", cacheForTests(t))
	if code != exitDone || !strings.Contains(out, "done after 3 rounds") {
		t.Fatalf("resume once there is room: exit %d %s\n%s", code, errOut, out)
	}
}

// fillDisk writes a file until its file system has no room left.
func fillDisk(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Error(err)
			}
			return
		}
	}
}

// A workspace whose disk is full when a call's changes are applied stops
// the run at its last committed round too, with exit 3 and what to do,
// where it failed the agent; the resume applies them once there is room.
func TestWorkspaceDiskFullPausesAndResumes(t *testing.T) {
	ws := t.TempDir()
	if err := syscall.Mount("tmpfs", ws, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("a workspace whose disk fills is a tmpfs mounted for the test, which needs root: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(ws, syscall.MNT_DETACH) })
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(`turns:
  - tool_calls: [{name: write_file, input: {path: out.txt, content: "written once there was room"}}]
  - text: finished
`), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`name: wsfull
model: {provider: script, script: script.yaml}
workspace: `+ws+`
tools: [{module: builtin, only: [write_file]}]
`), 0o644))
	filler := filepath.Join(ws, "filler")
	fillDisk(t, filler)
	store := t.TempDir()
	code, _, errOut := cairn(t, "run", "-f", agent, "--id", "wsfull", "--store", store, "--cache", cacheForTests(t))
	if code != exitPaused {
		t.Errorf("run on a full workspace: exit %d, want %d (paused); stderr: %s", code, exitPaused, errOut)
	}
	for _, want := range []string{"no space left on device", "free space", "cairn resume wsfull"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("run's stderr lacks %q:\n%s", want, errOut)
		}
	}
	must(t, os.Remove(filler))
	code, out, errOut := cairn(t, "resume", "wsfull", "--store", store, "--cache", cacheForTests(t))
	if code != exitDone || !strings.Contains(out, "done after 2 rounds") {
		t.Fatalf("resume once there is room: exit %d %s\n%s", code, errOut, out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "written once there was room" {
		t.Errorf("out.txt after the resume: %q, %v", b, err)
	}
}
