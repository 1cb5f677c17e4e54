package install

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Regression: README's fuzz command matched two fuzz targets, which go
// test refuses, and TestReadmeCommands runs only the lines that run cairn.
// Each `go test` line of README's that fuzzes is run here as written, in
// the repository's root, for one input (-fuzztime 1x).
func TestReadmeFuzzCommandRunsAsWritten(t *testing.T) {
	lines := readmeFuzzCommands(t, "../../README.md")
	if len(lines) == 0 {
		t.Fatal("README shows no fuzz command; the reader lost it")
	}
	for _, line := range lines {
		args := append(shellFields(strings.TrimPrefix(line, "go ")), "-fuzztime", "1x")
		cmd := exec.Command("go", args...)
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("README's `%s` ran as go %q: %v\n%s", line, args, err, out)
		}
	}
}

// readmeFuzzCommands returns the lines of README's code blocks that run
// go test with -fuzz, without their comments.
func readmeFuzzCommands(t *testing.T, path string) []string {
	var lines []string
	for _, line := range codeLines(t, path) {
		if strings.HasPrefix(line, "go test ") && strings.Contains(line, " -fuzz ") {
			lines = append(lines, line)
		}
	}
	return lines
}

// codeLines returns the lines of a Markdown page's code blocks, each
// without its comment and the spaces around it, leaving out empty ones.
func codeLines(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	must(t, err)
	var lines []string
	inCode := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); inCode && line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// shellFields splits a command line as a shell does one without variables
// or escapes: at spaces, but not inside single quotes, which it removes.
func shellFields(line string) []string {
	var fields []string
	var field strings.Builder
	quoted, inField := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inField = !quoted, true
		case r == ' ' && !quoted:
			if inField {
				fields = append(fields, field.String())
			}
			field.Reset()
			inField = false
		default:
			field.WriteRune(r)
			inField = true
		}
	}
	if inField {
		fields = append(fields, field.String())
	}
	return fields
}
