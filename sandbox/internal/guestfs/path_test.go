package guestfs

import (
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// A path as long as PATH_MAX, or with a name longer than NAME_MAX, is
// ENAMETOOLONG, as the kernel says; one byte less of either is not. One
// leading slash is wazero's joining, not the guest's, and not counted.
func TestCheckPathBounds(t *testing.T) {
	name := strings.Repeat("n", MaxName)
	long := strings.Repeat("d/", (MaxPath-1)/2) + "f"[:(MaxPath-1)%2]
	for _, tt := range []struct {
		path string
		want experimentalsys.Errno
	}{
		{"", 0},
		{"a/b/c", 0},
		{name, 0},
		{"/" + name + "/" + name, 0},
		{name + "n", experimentalsys.ENAMETOOLONG},
		{"a/" + name + "n/b", experimentalsys.ENAMETOOLONG},
		{long[:MaxPath-1], 0},
		{"/" + long[:MaxPath-1], 0},
		{long[:MaxPath-1] + "x", experimentalsys.ENAMETOOLONG},
		{strings.Repeat("a/", 8<<20), experimentalsys.ENAMETOOLONG},
	} {
		if got := CheckPath(tt.path); got != tt.want {
			t.Errorf("CheckPath of %d bytes: %v, want %v", len(tt.path), got, tt.want)
		}
	}
}
