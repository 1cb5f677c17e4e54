package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// smallDisk mounts a file system of its own, a tmpfs with opts
// ("size=…,nr_inodes=…"), for the test: a disk that fills. It skips
// where mounting is not allowed (not root).
func smallDisk(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		t.Skipf("a disk that fills is a tmpfs mounted for the test, which needs root: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// A call whose changes the store's disk has no room for fails saying the
// host's disk is full, and keeps none of them. The guest is told ENOSPC
// (it was told EIO, and once EPERM, and a tool reported
// "permission denied (the workspace may be read-only for this tool)" to
// the model, which could only give up on a workspace it may write).
func TestAFullDiskFailsTheCallSayingSo(t *testing.T) {
	store, err := OpenStore(smallDisk(t, "size=64m,nr_inodes=64"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	af := agentIn(t, `
name: full
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - {module: builtin, only: [write_file]}
  - {module: hostile.wasm, only: [flood], grant: {workspace: rw}}
`, `
turns:
  - tool_calls: [{name: flood, input: {n: 200}}]
  - tool_calls: [{name: write_file, input: {path: one.txt, content: "1"}}]
  - text: done
`)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	m := storedMessages(t, store, res.Agent)["call_1_0"]
	if !m.IsError || !strings.Contains(m.Text, "the host's disk is full (no space left on device)") ||
		!strings.Contains(m.Text, "none of its changes were kept") || strings.Contains(m.Text, "permission") {
		t.Fatalf("the flood's result: %+v", m)
	}
	entries, _ := os.ReadDir(af.WorkspaceDir())
	if len(entries) != 1 || entries[0].Name() != "one.txt" {
		t.Fatalf("the workspace holds %v; want one.txt alone, the flood's files not kept", entries)
	}
}

// A store whose disk fills while an agent runs stops the run at its last
// committed round, paused, whatever write found it full (the journal, a
// snapshot, the past, a call's kept changes or its staging), with the
// system's words and what to do (it once failed the run with the words
// alone); the rounds it committed stay, and once there is room again
// resume goes on to the end. What the model was told matches the workspace: every file a call
// said it wrote is there, once, and a call the full disk failed says so.
func TestAFullStorePausesTheRunAndResumeGoesOn(t *testing.T) {
	// Sizes at which the disk fills in different writes of a round.
	for _, size := range []string{"2100k", "2300k", "2500k", "3500k", "4100k"} {
		t.Run(size, func(t *testing.T) { fillAndResume(t, size) })
	}
}

func fillAndResume(t *testing.T, size string) {
	disk := smallDisk(t, "size="+size)
	const rounds = 300
	var script strings.Builder
	script.WriteString("turns:\n")
	for i := range rounds {
		fmt.Fprintf(&script, "  - tool_calls: [{name: write_file, input: {path: f%03d.txt, content: %s}}]\n", i, strings.Repeat("x", 3000))
	}
	script.WriteString("  - text: done\n")
	af := agentIn(t, `
name: filler
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
limits: {max_rounds: 1000}
`, script.String())
	store, err := OpenStore(disk)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"})
	if errors.Is(err, ErrStoreUnwritable) && res != nil {
		err = nil // its end could not be recorded either: the agent stays interrupted
	}
	if res == nil || err != nil || res.Status != StatusPaused || !strings.Contains(res.Reason, "no space left on device") ||
		!strings.Contains(res.Reason, "free space on it") {
		t.Fatalf("run on a disk that fills: %+v, %v", res, err)
	}
	t.Logf("the run paused after round %d: %s", res.Rounds, res.Reason)

	if err := syscall.Mount("tmpfs", disk, "tmpfs", syscall.MS_REMOUNT, "size=64m"); err != nil {
		t.Fatal(err)
	}
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: res.Agent})
	if err != nil || res.Status != StatusDone || res.Rounds != rounds+1 {
		t.Fatalf("resume with room again: %+v, %v", res, err)
	}
	told := storedMessages(t, store, res.Agent)
	for i := range rounds {
		call, name := fmt.Sprintf("call_%d_0", i+1), fmt.Sprintf("f%03d.txt", i)
		got, err := os.ReadFile(filepath.Join(af.WorkspaceDir(), name))
		switch m := told[call]; {
		case !m.IsError && (err != nil || len(got) != 3000):
			t.Errorf("%s was told %q, but %s holds %d bytes (%v)", call, m.Text, name, len(got), err)
		case m.IsError && !strings.Contains(m.Text, "disk is full"):
			t.Errorf("%s failed saying %q, not that the disk was full", call, m.Text)
		case m.IsError && err == nil:
			t.Errorf("%s failed, yet %s is there", call, name)
		}
	}
}
