package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// show, log and runs read an agent without running it: after a run of the
// example agent they print its labels, its conversation and its run.
func TestInspectionCommands(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "ex2", "--tenant", "acme"}, args...)...); code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}

	code, out, errOut := cairn(t, "show", "--store", store, "ex2")
	for _, want := range []string{"status     done", "round 5", "tenant=acme", "name: hello"} {
		if code != exitDone || !strings.Contains(out, want) {
			t.Fatalf("show: exit %d %s, lacks %q:\n%s", code, errOut, want, out)
		}
	}
	_, out, _ = cairn(t, "show", "--json", "--store", store, "ex2")
	var v struct {
		Agent    string `json:"agent"`
		Status   string `json:"status"`
		Messages int    `json:"messages"`
		Labels   struct {
			Tenant string `json:"tenant"`
		} `json:"labels"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Agent != "ex2" || v.Status != "done" ||
		v.Labels.Tenant != "acme" || v.Messages < 10 {
		t.Fatalf("show --json: %+v, %v\n%s", v, err, out)
	}

	_, out, _ = cairn(t, "log", "--store", store, "ex2")
	for _, want := range []string{"user: ", "model: I wrote REPORT.md", "→ call_1_0 list_dir", "← call_4_0 write_file: wrote"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}

	_, out, _ = cairn(t, "runs", "--json", "--store", store, "ex2")
	var r struct {
		Run    string `json:"run"`
		Rounds int    `json:"rounds"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || !strings.HasPrefix(r.Run, "run-") || r.Rounds != 5 || r.Status != "done" {
		t.Fatalf("runs --json: %+v, %v\n%s", r, err, out)
	}

	for _, cmd := range []string{"show", "log", "runs"} {
		code, _, errOut := cairn(t, cmd, "--store", store, "nobody")
		if code != exitUsage || !strings.Contains(errOut, `"nobody"`) {
			t.Errorf("%s of an unknown agent: exit %d %s", cmd, code, errOut)
		}
		if code, _, _ := cairn(t, cmd, "--store", store); code != exitUsage {
			t.Errorf("%s without an agent: exit %d, want %d", cmd, code, exitUsage)
		}
	}
}

// snapshot bookmarks an agent, show lists the bookmark, and fork makes a
// new agent from it whose show names its lineage.
func TestSnapshotAndForkCommands(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "orig"}, args...)...); code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	code, out, errOut := cairn(t, "snapshot", "--store", store, "--label", "after-report", "orig")
	if code != exitDone || !strings.Contains(out, "round 5 as after-report") {
		t.Fatalf("snapshot: exit %d %s %s", code, out, errOut)
	}
	if _, out, _ := cairn(t, "show", "--store", store, "orig"); !strings.Contains(out, "bookmark   after-report: round 5") {
		t.Fatalf("show lacks the bookmark:\n%s", out)
	}
	ws := filepath.Join(t.TempDir(), "copy")
	code, out, errOut = cairn(t, "fork", "--store", store, "--from", "after-report", "--as", "copy", "--workspace", ws, "orig")
	if code != exitDone || !strings.Contains(out, "forked orig at round 5 as copy") {
		t.Fatalf("fork: exit %d %s %s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "REPORT.md")); err != nil || !strings.Contains(string(b), "ridge cairn") {
		t.Fatalf("the fork's workspace lacks the report: %v", err)
	}
	if _, out, _ := cairn(t, "show", "--store", store, "copy"); !strings.Contains(out, "forked     from orig at round 5") {
		t.Fatalf("show of the fork:\n%s", out)
	}
	if code, _, _ := cairn(t, "fork", "--store", store, "--from", "nope", "orig"); code != exitUsage {
		t.Fatalf("fork from an unknown bookmark: exit %d", code)
	}
}

// gc keeps an agent whole: after it, the agent still shows and resumes.
func TestGCKeepsTheBoundary(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "g"}, args...)...); code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	code, out, errOut := cairn(t, "gc", "--store", store)
	if code != exitDone || !strings.Contains(out, "removed ") {
		t.Fatalf("gc: exit %d %s %s", code, out, errOut)
	}
	if code, out, _ := cairn(t, "show", "--store", store, "g"); code != exitDone || !strings.Contains(out, "round 5") {
		t.Fatalf("show after gc: exit %d\n%s", code, out)
	}
	if code, out, _ := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "g"); code != exitDone || !strings.Contains(out, "nothing to resume") {
		t.Fatalf("resume after gc: exit %d\n%s", code, out)
	}
}

// diff shows what the last round changed, line by line; undo takes it
// back, and a second undo the round before.
func TestDiffAndUndo(t *testing.T) {
	args := exampleAgent(t)
	store, ws := args[len(args)-3], args[3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "d"}, args...)...); code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	code, out, errOut := cairn(t, "diff", "--store", store, "d")
	if code != exitDone || !strings.Contains(out, "round 4") || !strings.Contains(out, "write REPORT.md (call_4_0)") ||
		!strings.Contains(out, "  +# Report") {
		t.Fatalf("diff: exit %d %s\n%s", code, errOut, out)
	}
	// A round whose changes are not kept is named wrong, as log --round's is.
	if code, _, errOut := cairn(t, "diff", "--round", "99", "--store", store, "d"); code != exitUsage || !strings.Contains(errOut, "round 99") {
		t.Fatalf("diff --round 99: exit %d %s", code, errOut)
	}
	if code, _, errOut := cairn(t, "fork", "--from", "nolabel", "--as", "d2", "--store", store, "d"); code != exitUsage ||
		!strings.Contains(errOut, `no such bookmark "nolabel"`) {
		t.Fatalf("fork --from nolabel: exit %d %s", code, errOut)
	}
	code, out, _ = cairn(t, "undo", "--store", store, "d")
	if code != exitDone || !strings.Contains(out, "undid round 4: 1 path restored") {
		t.Fatalf("undo: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "REPORT.md")); !os.IsNotExist(err) {
		t.Fatalf("REPORT.md is still there after undo: %v", err)
	}
	if code, _, errOut := cairn(t, "undo", "--store", store, "d"); code != exitFailed || !strings.Contains(errOut, "no changes kept") {
		t.Fatalf("undo with nothing left: exit %d %s", code, errOut)
	}
}
