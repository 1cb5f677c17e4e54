package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quoteFlow is a workflow whose second step writes the first's output,
// "100 EUR", to out/paid.txt.
var quoteFlow = map[string]string{
	"script.yaml": "turns:\n  - text: '100 EUR'\n",
	"quoter.yaml": "name: quoter\nmodel: {provider: script, script: script.yaml}\ntools: [{module: builtin, only: [read_file]}]\n",
	"flow.yaml": "name: pay\nworkspace: ws\nsteps:\n  - {name: quote, agent: quoter.yaml, prompt: quote}\n" +
		"  - {name: pay, needs: [quote], tool: write_file, module: builtin, input: {path: out/paid.txt, content: '{{steps.quote.output}}'}}\n",
}

// quotedWorkflow runs quoteFlow as workflow wa with a file in the way of
// out/paid.txt, so that its first step completes and its second fails;
// the file is then taken away, so that a resume runs the second step. It
// returns the flags of its store, the store and the directory of its
// files.
func quotedWorkflow(t *testing.T) ([]string, string, string) {
	t.Helper()
	dir := flowFiles(t, quoteFlow)
	in := filepath.Join(dir, "ws", "out")
	must(t, os.WriteFile(in, []byte("in the way\n"), 0o644))
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	code, out, errOut := cairn(t, append([]string{"workflow", "run", "--id", "wa", filepath.Join(dir, "flow.yaml")}, flags...)...)
	if code != exitFailed || !strings.Contains(out, "step quote done: 100 EUR") {
		t.Fatalf("run: exit %d\n%s%s; want step quote done and step pay failed", code, out, errOut)
	}
	must(t, os.Remove(in))
	return flags, store, dir
}

// Regression: a byte flipped in workflows/wa.cbor ("100 EUR" to "900 EUR"
// in the first step's recorded output) was used by `cairn workflow
// resume`, which fed the changed output to the later step. The record's
// checksum no longer matches: resume is refused (exit 1) naming the file,
// what is wrong and what to do with the workflow's record, and the later
// step does not run.
func TestWorkflowResumeOfDamagedRecordRefused(t *testing.T) {
	flags, store, dir := quotedWorkflow(t)
	path := filepath.Join(store, "workflows", "wa.cbor")
	data, err := os.ReadFile(path)
	must(t, err)
	must(t, os.WriteFile(path, bytes.Replace(data, []byte("100 EUR"), []byte("900 EUR"), 1), 0o600))
	code, out, errOut := cairn(t, append([]string{"workflow", "resume", "wa"}, flags...)...)
	if code != exitFailed {
		t.Fatalf("resume of the damaged record: exit %d\n%s%s; want %d", code, out, errOut, exitFailed)
	}
	for _, want := range []string{path, "checksum", "nothing was changed", "restore " + path + " from a backup", "move wa.cbor out of"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the error does not say %q: %s", want, errOut)
		}
	}
	if strings.Contains(errOut, "agent aside") {
		t.Errorf("the error says to move an agent aside: %s", errOut)
	}
	if paid, err := os.ReadFile(filepath.Join(dir, "ws", "out", "paid.txt")); !os.IsNotExist(err) {
		t.Errorf("step pay ran on the damaged record and wrote %q (%v)", paid, err)
	}
}

// Regression: after `cp workflows/wa.cbor workflows/wq.cbor`, `cairn
// workflow resume wq` took wq's lock but ran and wrote workflow wa, and
// `workflow ls` listed wa twice. The copy is refused as holding another
// workflow, and ls lists wa once and wq as unreadable.
func TestWorkflowRecordCopiedToAnotherIDRefused(t *testing.T) {
	flags, store, _ := quotedWorkflow(t)
	data, err := os.ReadFile(filepath.Join(store, "workflows", "wa.cbor"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(store, "workflows", "wq.cbor"), data, 0o600))
	code, out, errOut := cairn(t, append([]string{"workflow", "resume", "wq"}, flags...)...)
	if code != exitFailed || !strings.Contains(errOut, `holds workflow "wa", not "wq"`) || !strings.Contains(errOut, "move wq.cbor out of") {
		t.Fatalf("resume wq: exit %d\n%s%s; want it refused as holding wa", code, out, errOut)
	}
	_, out, _ = cairn(t, "workflow", "ls", "--store", store)
	if n := strings.Count(out, "\nwa "); n != 1 || !strings.Contains(out, "\nwq ") {
		t.Fatalf("ls lists wa %d times:\n%s", n, out)
	}
}

// Regression: `cairn workflow ls` put a record's whole read error, some
// 200 characters, in the STATUS column. The status is "unreadable", the
// table keeps its width, and the error follows on stderr (and `cairn
// workflow show` gives it).
func TestWorkflowLsUnreadableStatusShort(t *testing.T) {
	_, store, _ := quotedWorkflow(t)
	path := filepath.Join(store, "workflows", "wa.cbor")
	data, err := os.ReadFile(path)
	must(t, err)
	must(t, os.WriteFile(path, data[:len(data)/2], 0o600)) // cut short: no cairn reads it
	code, out, errOut := cairn(t, "workflow", "ls", "--store", store)
	if code != exitDone {
		t.Fatalf("ls: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("ls printed %d lines, want a header and wa:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if len(l) > 80 {
			t.Errorf("a line of %d characters: %q", len(l), l)
		}
	}
	if f := strings.Fields(lines[1]); len(f) < 3 || f[0] != "wa" || f[2] != "unreadable" {
		t.Errorf("wa's line: %q; want its status unreadable", lines[1])
	}
	if !strings.Contains(errOut, "workflow wa is unreadable") || !strings.Contains(errOut, path) || !strings.Contains(errOut, "does not decode") {
		t.Errorf("stderr does not say why: %s", errOut)
	}
	code, _, errOut = cairn(t, "workflow", "show", "--store", store, "wa")
	if code != exitFailed || !strings.Contains(errOut, path) {
		t.Errorf("show: exit %d, %s", code, errOut)
	}
}
