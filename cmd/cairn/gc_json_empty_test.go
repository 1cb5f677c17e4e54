package main

import (
	"encoding/json"
	"testing"
)

// Regression: `cairn gc --json` with nothing to remove printed
// "files":null, which a script reading the list as one fails on.
func TestGCJSONWithNothingToRemoveListsNoFiles(t *testing.T) {
	store := t.TempDir()
	for _, args := range [][]string{{"gc", "--dry-run", "--json"}, {"gc", "--json"}} {
		code, out, errOut := cairn(t, append(args, "--store", store)...)
		if code != exitDone {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if files, ok := got["files"].([]any); !ok || len(files) != 0 {
			t.Errorf("%v: files is %#v, want an empty list\n%s", args, got["files"], out)
		}
	}
}
