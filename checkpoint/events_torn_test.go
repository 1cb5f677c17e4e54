package checkpoint

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Regression: a run that appended to a history whose last line a crash had
// cut short glued its first line to the line cut short, and the reader
// lost both. The first line appended starts a line of its own; a history
// that ends with a newline, or is empty, gets nothing added.
func TestEventsAfterATornLastLine(t *testing.T) {
	for _, tt := range []struct{ name, before, want string }{
		{"torn", `{"type":"tool_st`, "{\"type\":\"tool_st\n{\"type\":\"run_start\"}\n"},
		{"whole", "{\"type\":\"run_end\"}\n", "{\"type\":\"run_end\"}\n{\"type\":\"run_start\"}\n"},
		{"empty", "", "{\"type\":\"run_start\"}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := OpenFileStore(t.TempDir())
			must(t, err)
			newAgent(t, s, "a1", 1).Close()
			must(t, os.WriteFile(filepath.Join(s.Dir(), "agents", "a1", eventsFile), []byte(tt.before), 0o600))
			w, err := s.Events("a1")
			must(t, err)
			_, err = io.WriteString(w, "{\"type\":\"run_start\"}\n")
			must(t, err)
			must(t, w.Close())
			r, err := s.ReadEvents("a1")
			must(t, err)
			defer r.Close()
			got, err := io.ReadAll(r)
			must(t, err)
			if string(got) != tt.want {
				t.Fatalf("history %q, want %q", got, tt.want)
			}
		})
	}
}
