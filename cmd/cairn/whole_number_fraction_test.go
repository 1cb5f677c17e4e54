package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a fraction for a whole-number key of an agent file was cut
// to its whole part without a word, so limits: {max_rounds: 1.5} ran one
// round and max_rounds: 0.5 was 0, which is the default of 50; a
// workflow file's alike. Each is refused with exit 2, naming its line
// and key, and no agent or workflow is stored.
func TestFractionForWholeNumberRefused(t *testing.T) {
	const head = "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n"
	for _, c := range []struct{ yaml, want string }{
		{head + "limits: {max_rounds: 1.5}\n", "line 5: limits.max_rounds: want a whole number, found `1.5`"},
		{head + "limits:\n  max_rounds: 0.5\n", "line 6: limits.max_rounds: want a whole number, found `0.5`"},
		{head + "limits: {max_tokens: 1e3, max_rounds: -.inf}\n", "line 5: limits.max_rounds: want a whole number, found `-.inf`"},
		{head + "max_parallel: 2.5\n", "line 5: max_parallel: want a whole number, found `2.5`"},
		{head + "sandbox: {files: 8.5}\n", "line 5: sandbox.files: want a whole number, found `8.5`"},
		{head + "context: {budget: 8000.5}\n", "line 5: context.budget: want a whole number, found `8000.5`"},
		{strings.Replace(head, "script.yaml}", "script.yaml, max_retries: 1.5}", 1), "line 2: model.max_retries: want a whole number, found `1.5`"},
		{strings.Replace(head, "[{module: builtin}]", "\n  - module: builtin\n    limits: {staged_paths: 0.5}", 1),
			"line 6: tools.limits.staged_paths: want a whole number, found `0.5`"},
		{strings.Replace(head, "[{module: builtin}]", "\n  - module: builtin\n    grant: {net: {allow: [example.com], max_requests: 2.5}}", 1),
			"line 6: tools.grant.net.max_requests: want a whole number, found `2.5`"},
		{head + "agents:\n  - name: w\n    description: writes\n    model: {provider: script, script: script.yaml}\n    tools: [{module: builtin}]\n    limits: {max_rounds: 1.5}\n",
			"line 10: limits.max_rounds: want a whole number, found `1.5`"},
	} {
		agentFile, store := scriptAgent(t, c.yaml, "turns:\n  - text: hi\n")
		code, out, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "a", "-f", agentFile, "go")
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d\n%s%s; want exit %d saying %s", c.yaml, code, out, errOut, exitUsage, c.want)
		}
		for _, f := range storedFiles(t, store) {
			if !strings.Contains(f, "blobs") {
				t.Errorf("%s: stored %s", c.yaml, f)
			}
		}
	}

	for _, c := range []struct{ yaml, want string }{
		{"name: f\nworkspace: ws\nmax_parallel: 1.5\nsteps:\n  - {name: s, tool: read_file, module: builtin, input: {path: notes.md}}\n",
			"line 3: max_parallel: want a whole number, found `1.5`"},
		{"name: f\nworkspace: ws\nsteps:\n  - name: s\n    tool: read_file\n    module: builtin\n    input: {path: notes.md}\n    grant: {workspace: ro, net: {allow: [example.com], max_requests: 0.5}}\n",
			"line 8: steps.grant.net.max_requests: want a whole number, found `0.5`"},
	} {
		dir := flowFiles(t, map[string]string{"flow.yaml": c.yaml})
		store := t.TempDir()
		code, out, errOut := cairn(t, "workflow", "run", "--store", store, "--cache", cacheForTests(t), filepath.Join(dir, "flow.yaml"))
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d\n%s%s; want exit %d saying %s", c.yaml, code, out, errOut, exitUsage, c.want)
		}
		if files := storedFiles(t, store); len(files) != 0 {
			t.Errorf("%s: stored %v", c.yaml, files)
		}
	}
}
