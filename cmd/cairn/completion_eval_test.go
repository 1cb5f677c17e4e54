package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var evalRE = regexp.MustCompile(`eval "\$\(cairn [^)]*\)"`)

// The `eval "$(cairn completion bash)"` that README and docs/cli.md show
// runs as written in a real bash, with the cairn built here on PATH, and
// leaves a completion that asks cairn: `cairn sho` completes to show and
// `cairn show --js` to --json. (A zsh line is run where zsh is.)
func TestCompletionEvalAsWritten(t *testing.T) {
	var lines []string
	for _, page := range []string{"../../README.md", "../../docs/cli.md"} {
		b, err := os.ReadFile(page)
		must(t, err)
		lines = append(lines, evalRE.FindAllString(string(b), -1)...)
	}
	if len(lines) == 0 {
		t.Fatal("README shows no eval of cairn completion; the reader lost it")
	}
	bin := t.TempDir() // where the shell finds the binary by the name the line gives it
	must(t, os.Symlink(cairnBinary(t), filepath.Join(bin, "cairn")))
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	for _, line := range lines {
		shell := "bash"
		if strings.HasSuffix(line, `zsh)"`) {
			shell = "zsh"
		}
		if _, err := exec.LookPath(shell); err != nil {
			t.Logf("%s: no %s here", line, shell)
			continue
		}
		for _, tt := range []struct{ words, want string }{
			{"cairn sho", "show"},
			{"cairn show --js", "--json"},
		} {
			words := strings.Fields(tt.words)
			script := line + "\nCOMP_WORDS=(" + tt.words + "); COMP_CWORD=" + strconv.Itoa(len(words)-1) +
				"\n_cairn_complete\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
			cmd := exec.Command(shell, "-c", script)
			cmd.Env = append(os.Environ(), "PATH="+path)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains("\n"+string(out), "\n"+tt.want+"\n") {
				t.Errorf("%s, then completing %q: %v, %q; want %q among the completions", line, tt.words, err, out, tt.want)
			}
		}
	}
}
