package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: an agent file with a second YAML document (after ---) ran
// with the first alone: the second's keys (a system prompt, approvals)
// were left out without a word. Loading it is refused, naming the line;
// a --- that ends the file, with nothing after it, is no document.
func TestAgentFileWithASecondDocumentIsRefused(t *testing.T) {
	dir := t.TempDir()
	first := "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: .\ntools: [{module: builtin}]\n"
	for _, tt := range []struct{ name, text, want string }{
		{"second document", first + "---\nsystem: answer in French\n", "line 5: a second YAML document"},
		{"--- at the end", first + "---\n", ""},
		{"comment after ---", first + "---\n# nothing more\n", ""},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadAgentFile(path)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v; want an error saying %q", tt.name, err, tt.want)
		}
	}
}
