package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A script file that does not parse was refused as "script: yaml: line 1:
// …", which did not say which file; the error names it now.
func TestScriptFileThatDoesNotParseIsNamed(t *testing.T) {
	for name, src := range map[string]string{
		"yaml":        "turns:\n  - text: [unclosed\n",
		"unknown key": "turns:\n  - txet: hi\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "turns.yaml")
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(Spec{Provider: "script", Script: path})
			if err == nil || !strings.Contains(err.Error(), "script file "+path+": ") {
				t.Fatalf("err %v, want it to name %s", err, path)
			}
		})
	}
}
