package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host/model"
)

// Regression: an agent file whose model's script is not there, or is no
// script, was refused naming the script but neither the agent file nor
// its line; it now names both, as a sub-agent's does, and a script given
// in place of the file's (--model) is named without them.
func TestModelScriptRefusedAtItsLineOfTheAgentFile(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("turns: 5\n"), 0o644))
	for _, tt := range []struct {
		name, script string
		is           error
	}{{"missing", "nothere.yaml", ErrMissing}, {"no script", "bad.yaml", model.ErrScript}} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, "agent.yaml")
			must(t, os.WriteFile(file, []byte("name: x\nworkspace: ws\nmodel: {provider: script, script: "+tt.script+"}\ntools: [{module: builtin}]\n"), 0o644))
			af, err := LoadAgentFile(file)
			must(t, err)
			err = af.CheckModel(nil)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), file+" line 3: model: ") {
				t.Fatalf("the agent file's script: %v", err)
			}
			err = af.CheckModel(&model.Spec{Provider: "script", Script: filepath.Join(dir, tt.script)})
			if !errors.Is(err, tt.is) || strings.Contains(err.Error(), "line 3") {
				t.Fatalf("a script in place of the file's: %v", err)
			}
		})
	}
}
