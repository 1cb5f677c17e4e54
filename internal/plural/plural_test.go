package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Count(0, "round"), "0 rounds"},
		{Count(1, "round"), "1 round"},
		{Count(2, "round"), "2 rounds"},
		{Count(int64(1), "tool call"), "1 tool call"},
		{Count(uint64(3), "byte"), "3 bytes"},
		{Count(1, "fill directory", "fill directories"), "1 fill directory"},
		{Count(4, "fill directory", "fill directories"), "4 fill directories"},
		{Count(-1, "round"), "-1 rounds"},
		{"1 of " + Count(1, "step"), "1 of 1 step"},
		{Of(3, "step") + " ran", "steps ran"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
