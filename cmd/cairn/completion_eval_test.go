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

// The `eval "$(cairn completion bash)"` and `eval "$(cairn completion
// zsh)"` that README and docs/cli.md show run as written in a real bash
// and a real zsh, with the cairn built here on PATH, and leave a
// completion that asks cairn: `cairn sho` completes to show and `cairn
// show --js` to --json. zsh starts with no startup files (-f), as a
// ~/.zshrc that never loaded zsh's completion system; CI installs zsh, and
// with CI=true a missing shell fails the test.
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
			if os.Getenv("CI") == "true" {
				t.Errorf("%s: no %s here; .ci/run installs it", line, shell)
			} else {
				t.Logf("%s: no %s here", line, shell)
			}
			continue
		}
		for _, tt := range []struct{ words, want string }{
			{"cairn sho", "show"},
			{"cairn show --js", "--json"},
		} {
			script := bashCompleting(line, tt.words)
			args := []string{"-c", script}
			if shell == "zsh" {
				script = zshCompleting(line, tt.words)
				args = []string{"-f", "-c", script}
			}
			cmd := exec.Command(shell, args...)
			home := t.TempDir() // zsh's completion system writes its dump there
			cmd.Env = append(os.Environ(), "PATH="+path, "HOME="+home, "ZDOTDIR="+home)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains("\n"+string(out), "\n"+tt.want+"\n") {
				t.Errorf("%s, then completing %q: %v, %q; want %q among the completions", line, tt.words, err, out, tt.want)
			}
		}
	}
}

// bashCompleting is line, then what bash does on a tab after words: the
// completion function called with COMP_WORDS and COMP_CWORD, and its
// COMPREPLY printed a line each.
func bashCompleting(line, words string) string {
	return line + "\nCOMP_WORDS=(" + words + "); COMP_CWORD=" + strconv.Itoa(len(strings.Fields(words))-1) +
		"\n_cairn_complete\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
}

// zshCompleting is line, then what zsh's completion system does on a tab
// after words: the function compdef registered for cairn called with
// words and CURRENT set. _describe and _files, which only a completion
// widget can run, print the candidates they were given, a name a line.
func zshCompleting(line, words string) string {
	return line + `
[[ ${_comps[cairn]} == _cairn_complete ]] || { print -u2 "compdef registered ${_comps[cairn]:-nothing} for cairn"; exit 1; }
_describe() { local c; for c in "${(@P)2}"; do print -r -- "${c%%:*}"; done; }
_files() { print -u2 "no candidates: _files"; }
words=(` + words + `); CURRENT=${#words}
${_comps[cairn]}
`
}
