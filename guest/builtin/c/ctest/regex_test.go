package ctest

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// refusedByC reports whether an error from C is one it gives where Go may
// compile, or fail later in the pattern: a Unicode class, or a program over
// its smaller size cap.
func refusedByC(cErr string) bool {
	return strings.Contains(cErr, "Unicode classes are not supported") ||
		strings.Contains(cErr, "expression too large")
}

// goRegex answers what the C code should: Go's compile error, or whether
// each line contains a match.
func goRegex(pattern string, icase bool, lines []string) ([]bool, string) {
	if icase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err.Error()
	}
	out := make([]bool, len(lines))
	for i, l := range lines {
		out[i] = re.MatchString(l)
	}
	return out, ""
}

// short cuts s for a failure message.
func short(s string) string {
	if len(s) > 120 {
		return s[:60] + "..." + s[len(s)-60:]
	}
	return s
}

// compareRegex fails t when C and Go disagree on pattern over lines.
func compareRegex(t *testing.T, h *harness, pattern string, icase bool, lines ...string) {
	t.Helper()
	want, wantErr := goRegex(pattern, icase, lines)
	got, gotErr := h.regex(t, pattern, icase, lines...)
	if refusedByC(gotErr) {
		return
	}
	if (gotErr != "") != (wantErr != "") {
		t.Fatalf("pattern %q icase %v: C error %q, Go error %q", short(pattern), icase, short(gotErr), short(wantErr))
	}
	if gotErr != "" {
		if !strings.Contains(pattern, "\x00") && gotErr != wantErr {
			t.Fatalf("pattern %q icase %v: C error %q, Go error %q", short(pattern), icase, short(gotErr), short(wantErr))
		}
		return
	}
	for i := range lines {
		if got[i] != want[i] {
			t.Fatalf("pattern %q icase %v line %q: C says %v, Go %v", short(pattern), icase, short(lines[i]), got[i], want[i])
		}
	}
}

// regexLines is the text every table pattern is matched against, one line
// at a time.
var regexLines = []string{
	"", "a", "b", "ab", "abc", "aaa", "aab", "abab", "xyz", "hello world", "Hello World",
	"foo bar baz", "foobar", "foo_bar", "foo-bar", "x\ny", "\n", "a\n", "\na", "line1\nline2\n",
	"123", "abc123def", "3.14", "  indented", "tab\there", "CamelCase", "snake_case",
	"ÀÉÎÕÜ", "àéîõü", "straße", "STRASSE", "ſ", "K", "k", "\u212a", "µ", "μ", "Μ",
	"日本語", "a日b", "\xff", "a\xffb", "\xed\xa0\x80", "\xc0\xaf", "\xe2\x82", "\x00", "a\x00b",
	"{}", "a{2}", "[x]", "a.b", "a+b", "a*b", "(a)", "$x", "^x", "a|b", "back\\slash",
	"func main() {", "  return nil, err", "TODO: fix", "// comment", "x := 1",
	strings.Repeat("a", 50), strings.Repeat("ab", 30) + "c",
}

// regexPatterns cover each feature of the syntax.
var regexPatterns = []string{
	// literals, dot, anchors
	``, `a`, `ab`, `abc`, `.`, `a.c`, `^a`, `a$`, `^$`, `^`, `$`, `^abc$`, `x.y`, `(?s)x.y`,
	`(?m)^line2$`, `(?m)^$`, `(?m)a$`, `^line1$`, `\Aa`, `a\z`, `(?m)\Aline`, `\n`,
	// classes
	`[abc]`, `[^abc]`, `[a-c]`, `[^a-z]`, `[a-z0-9_]+`, `[]a]`, `[^]a]`, `[a-]`, `[-a]`,
	`[\]]`, `[\\]`, `[.]`, `[*+?]`, `[\d]`, `[\D]`, `[\s\S]`, `[^\n]`, `[^x]`, `[\x00-\x1f]`,
	`[[:alpha:]]+`, `[[:digit:]]`, `[[:^alpha:]]`, `[[:space:]]`, `[[:upper:]]`, `[[:word:]]`,
	`[[:punct:]]`, `[[:xdigit:]]+`, `[[:alnum:][:punct:]]`, `[à-ü]`, `[日本]`, `[^日本]`, `[\x{FFFD}]`,
	// Perl classes and escapes
	`\d`, `\d+`, `\D`, `\w+`, `\W`, `\s`, `\S+`, `\.`, `\+`, `\*`, `\$`, `\^`, `\\`, `\{`, `\t`,
	`\x41`, `\x{41}`, `\x{65e5}`, `\101`, `\0`, `\a\f\v\r`, `\Qa.b\E`, `\Qa+b`, `\Q\E`,
	// word boundaries
	`\bfoo\b`, `\Bfoo`, `foo\B`, `\b`, `\B`, `\bbar`, `o\b`,
	// groups and alternation
	`(a)`, `(a|b)`, `(?:ab)+`, `(?P<x>a)b`, `(?<y>ab)c`, `a|b|c`, `foo|bar`, `(a|ab)(c|bcd)`,
	`(a|)`, `(|a)`, `a(|)`, `()`, `(?:)`, `((a))`, `a|`, `|`, `x|y\n`,
	// flags
	`(?i)hello`, `(?i)straSSe`, `(?i)ſ`, `(?i)k`, `(?i)K`, `(?i)µ`, `(?i)Μ`, `(?i)àÉ`, `(?i)[a-c]+`,
	`(?i)[^a]`, `(?i)\w`, `(?i)\W`, `(?i)[[:upper:]]`, `(?i:A)b`, `a(?i)B`, `(?i)a(?-i)B`,
	`(?U)a+`, `(?U)a+?`, `(?s).`, `(?s:.)`, `(?ims)`, `(?i)(?m)^H`, `(?-m)^a`, `(?i-s).`,
	// repetition
	`a*`, `a+`, `a?`, `a*?`, `a+?`, `a??`, `a{2}`, `a{2,}`, `a{2,3}`, `a{0}`, `a{0,}`, `a{0,1}`,
	`a{2}?`, `(ab){2}`, `(a|b){3,5}c`, `a{1000}`, `a{,2}`, `a{`, `a{x}`, `a{1`, `a{1,`, `{`, `{1}`,
	`x*y*z*`, `(a*)*`, `(a*)+b`, `(a|b)*abb`, `^(a+)+$`, `a{0}b`, `(?:a{0})*`, `^*`, `$*`, `\b*a`,
	// UTF-8
	`日本`, `.本`, `^.$`, `^..$`, `^...$`, "\u00e0", `\x{FFFD}`, "[\u00c0-\u00dc]",
}

func TestRegexAgainstGo(t *testing.T) {
	h := newHarness(t)
	for _, p := range regexPatterns {
		compareRegex(t, h, p, false, regexLines...)
		compareRegex(t, h, p, true, regexLines...)
	}
}

// TestRegexErrors checks the text of the errors a user is most likely to
// see, word for word against Go.
func TestRegexErrors(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{
		`(a`, `a)`, `(`, `)`, `((a)`, `(a))`, `[a`, `[`, `[]`, `[^`, `[a-`, `[z-a]`, `[[:foo:]]`,
		`*`, `+a`, `?`, `a**`, `a*+`, `a*??`, `a{2}{3}`, `a{1001}`, `a{2,1}`, `(a{1000}){2}`,
		`(?i)*`, `(*)`, `a|*`, `\`, `a\`, `\8`, `\1`, `\x`, `\xg`, `\x{}`, `\x{110000}`, `\x{12`, `\C`,
		`\y`, `\é`, `(?P<>a)`, `(?P<1a b>x)`, `(?P<name`, `(?<=a)b`, `(?<!a)b`, `(?=a)`, `(?!a)`,
		`(?`, `(?z)`, `(?i-)`, `(?-)`, `(?i`, "a\xffb", "[\xff]", `\p`, `\p{L`, `(a)\1`, `\p0`, `\p{Old_Italic}`, `\p{Foo}`, `\P{^Foo}`, `[\pé]`,
		`x{1000}{1000}`, `((((a{100}){100}){100}){100})`,
	} {
		_, want := goRegex(p, false, nil)
		if want == "" {
			t.Fatalf("Go compiles %q; this table is for errors", p)
		}
		_, got := h.regex(t, p, false)
		if got != want {
			t.Errorf("pattern %q: C error %q, Go error %q", p, got, want)
		}
	}
}

// TestRegexIgnoreCaseError checks that icase words errors as Go does for a
// pattern prefixed with (?i).
func TestRegexIgnoreCaseError(t *testing.T) {
	h := newHarness(t)
	_, got := h.regex(t, "(a", true)
	if want := "error parsing regexp: missing closing ): `(?i)(a`"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestRegexUnicodeClassesRefused checks that \p and \P classes, which Go
// accepts, are refused with an error naming them.
func TestRegexUnicodeClassesRefused(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{`\pL`, `\p{Greek}`, `\PN`, `[\p{Lu}]`, `\p{^L}`, `\p{greek}`, `\p{Uppercase_Letter}`, `\p{ASCII}`} {
		_, got := h.regex(t, p, false, "x")
		if !strings.Contains(got, "Unicode classes are not supported") {
			t.Errorf("pattern %q: got %q, want a refusal", p, got)
		}
	}
}

// TestRegexHostile runs patterns that make a backtracking matcher take
// exponential time on long input; here they must finish, and agree with Go.
func TestRegexHostile(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("a", 20000)
	for _, p := range []string{
		`(a*)*b`, `(a+)+b`, `(a|a)*b`, `(a|aa)+$b`, `^(a?){25}a{25}$`, `(x+x+)+y`, `(.*a){20}`,
		`a{1000}`, `(?:a{0,1000}){1}b`, `((a{10}){10}){10}`, `(a*)*$`, `(?:(?:a*)*)*c`,
	} {
		compareRegex(t, h, p, false, long, long+"b", strings.Repeat("a", 25), strings.Repeat("x", 5000))
	}
}

// TestRegexDeepNesting checks the deepest nesting Go allows compiles and
// runs within the default stack, and one level more is refused as Go does.
func TestRegexDeepNesting(t *testing.T) {
	h := newHarness(t)
	for _, depth := range []int{500, 998, 999, 1000, 1001} {
		for _, open := range []string{"(", "(?:", "(?:a*"} {
			closing := ")"
			if open == "(?:a*" {
				closing = ")*"
			}
			p := strings.Repeat(open, depth) + "a" + strings.Repeat(closing, depth)
			compareRegex(t, h, p, false, "a", "b")
		}
	}
}

// TestRegexInvalidUTF8Input checks that an invalid byte in the input matches
// as U+FFFD, one byte at a time, as in Go.
func TestRegexInvalidUTF8Input(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{`^.$`, `^..$`, `^\x{FFFD}$`, `^[^a]$`, `^\W$`, `\xff`} {
		compareRegex(t, h, p, false, "\xff", "\xff\xfe", "\xe2\x82", "\xf0\x9f\x98", "\xed\xa0\x80", string(utf8.RuneError))
	}
}

// FuzzRegexAgainstGo checks that C and Go agree on whether a pattern
// compiles, on the error's words, and on whether a line contains a match.
func FuzzRegexAgainstGo(f *testing.F) {
	for i, p := range regexPatterns {
		f.Add(p, regexLines[i%len(regexLines)], i%3 == 0)
	}
	h := newHarness(f)
	f.Fuzz(func(t *testing.T, pattern, line string, icase bool) {
		if len(pattern) > 2000 || len(line) > 10000 {
			return
		}
		compareRegex(t, h, pattern, icase, line)
	})
}
