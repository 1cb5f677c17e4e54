package checkpoint

import (
	"regexp"
	"strings"
	"testing"
)

// idPattern is what CheckID accepts, as the regular expression it
// documents.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$`)

// TestCheckID: an id is one directory name of the store, and nothing that
// could step out of it.
func TestCheckID(t *testing.T) {
	for _, tt := range []struct {
		id string
		ok bool
	}{
		{"a", true},
		{"agent-1_x.y", true},
		{"-dash", true},
		{"_under", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{".", false},
		{"..", false},
		{".hidden", false},
		{"a/b", false},
		{"../x", false},
		{"a b", false},
		{"a\x00", false},
		{"a\n", false},
		{"é", false},
		{"a\xff", false},
	} {
		if err := CheckID(tt.id); (err == nil) != tt.ok {
			t.Errorf("CheckID(%q) = %v, want ok %v", tt.id, err, tt.ok)
		}
	}
}

// FuzzCheckID: CheckID accepts exactly what its pattern matches.
func FuzzCheckID(f *testing.F) {
	for _, id := range []string{"a", ".a", "a.", "a/b", strings.Repeat("z", 128), strings.Repeat("z", 129), "a\n", "\xffa"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if ok := CheckID(id) == nil; ok != idPattern.MatchString(id) {
			t.Fatalf("CheckID(%q) ok %v, its pattern says %v", id, ok, !ok)
		}
	})
}
