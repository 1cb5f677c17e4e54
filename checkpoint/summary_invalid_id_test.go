package checkpoint

import (
	"errors"
	"strings"
	"testing"
)

// Summary of a name that cannot be an agent's id is ErrInvalidID, as
// every other call that names an agent: it once looked for the agent
// first and said ErrNotFound, so `cairn serve` answered 404, not 400.
func TestSummaryOfAnInvalidIDIsInvalid(t *testing.T) {
	s, err := OpenFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"../x", "a\x00b", ".hidden", "", strings.Repeat("a", 300)} {
		if _, err := s.Summary(id); !errors.Is(err, ErrInvalidID) || errors.Is(err, ErrNotFound) {
			t.Errorf("Summary(%q) = %v, want ErrInvalidID", id, err)
		}
	}
	if _, err := s.Summary("nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Summary of a valid id with no agent = %v, want ErrNotFound", err)
	}
}
