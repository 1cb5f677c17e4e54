package netguard

import "testing"

func TestFinderForms(t *testing.T) {
	f := newFinder([]string{"Bearer Tok+/9f", "Tok+/9f", "50%off"})
	for _, tc := range []struct{ in, want string }{
		{"no secret here", "no secret here"},
		{"a Tok+/9f b", "a [redacted] b"},
		{"TOK+/9F", "[redacted]"},
		{"x=tok%2B%2F9f&y", "x=[redacted]&y"},
		{"x=tok%2b%2f9F", "x=[redacted]"},
		{"x=t%6Fk+%2f9f", "x=[redacted]"},          // a letter escaped, '+' as it is
		{"bearer+tok%2B/9f", "[redacted]"},         // '+' for the space
		{`{"a":"Tok+\/9f"}`, `{"a":"[redacted]"}`}, // JSON's \/
		{`{"a":"Tok\u002b\u002F9f"}`, `{"a":"[redacted]"}`},
		{"50%25off and 50%off", "[redacted] and [redacted]"}, // '%' as it is and escaped
		{"Tok+/9fTok+/9f", "[redacted]"},                     // adjacent: one span
		{"Tok+/9", "Tok+/9"},                                 // cut short
		{"Tok+/9%", "Tok+/9%"},
		{"tok%2", "tok%2"},
		{`Tok+\u00`, `Tok+\u00`},
		{"%zz%", "%zz%"},
	} {
		if got := f.hide(tc.in); got != tc.want {
			t.Errorf("hide(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	b := newFinder([]string{"abcdefgh", "abc", "ab>?>?>?cd"})
	for in, want := range map[string]string{
		"YWJjZGVmZ2g=": "[redacted]", "YWJjZGVmZ2g": "[redacted]", "ywjjzgvmz2g": "[redacted]",
		"eGFiY2RlZmdo":             "eG[redacted]",     // base64 of "x" and it: G holds bits of both
		"eHlhYmNkZWZnaHo=":         "eHl[redacted]Ho=", // of "xy", it and "z"
		"eHl6YWJjZGVmZ2g_":         "eHl6[redacted]_",  // of "xyz", it and "?" (whose first bits are 0, as padding's), URL alphabet
		"YWI-Pz4_Pj9jZA":           "[redacted]",       // URL alphabet, no padding
		"YWI%2BPz4%2FPj9jZA%3D%3D": "[redacted]",       // query-escaped
		"YWJj":                     "YWJj",             // "abc": too short to look for its base64
	} {
		if got := b.hide(in); got != want {
			t.Errorf("hide(%q) = %q, want %q", in, got, want)
		}
	}
	var zero finder
	if zero.hide("Tok+/9f") != "Tok+/9f" || newFinder(nil).holds("") || newFinder([]string{""}).holds("x") {
		t.Error("a finder of no secret found one")
	}
}

// Whatever a server sends, hiding neither fails nor leaves a secret, and
// text that holds none is given as it came.
func FuzzHide(f *testing.F) {
	const secret = "Tok+/9f%3"
	for _, s := range []string{"", "Tok+/9f%3", "tok%2B%2f9F%253", `Tok+\/9f%3`, "%%%", `\u00`, "+"} {
		f.Add(s)
	}
	fd := newFinder([]string{secret})
	f.Fuzz(func(t *testing.T, s string) {
		got := fd.hide(s)
		if fd.holds(got) {
			t.Fatalf("hide(%q) = %q still holds it", s, got)
		}
		if !fd.holds(s) && got != s {
			t.Fatalf("hide(%q) = %q, without a secret", s, got)
		}
	})
}
