package stats

import "testing"

func TestDescribe(t *testing.T) {
	tests := []struct {
		text string
		top  int
		want string
	}{
		{"", 3, "0 lines, 0 words, 0 bytes\n"},
		{"stone stone cairn\nstone cairn ridge", 2, "2 lines, 6 words, 35 bytes\nstone 3\ncairn 2\n"},
		{"a bb ccc dddd", 5, "1 lines, 4 words, 13 bytes\ndddd 1\n"},
		{"Ridge ridge RIDGE fog.\n", 1, "1 lines, 4 words, 23 bytes\nridge 3\n"},
	}
	for _, tt := range tests {
		if got := Describe(tt.text, tt.top); got != tt.want {
			t.Errorf("Describe(%q, %d) = %q, want %q", tt.text, tt.top, got, tt.want)
		}
	}
}
