package view

import (
	"slices"
	"strings"
	"testing"
)

// FuzzDiffLines checks that the lines of a diff make the texts it is of,
// that it shares as many lines as the texts have in common (a longest
// common subsequence), and that in each run of replaced lines the added
// come before the dropped.
func FuzzDiffLines(f *testing.F) {
	for _, s := range [][2]string{
		{"a\nb\nc\n", "a\nc\nd\n"}, {"", "x\n"}, {"x\n", ""}, {"\n", ""}, {"a\nb", "b\na"},
		{"a\nb\na\nb\n", "b\na\nb\na\n"}, {"x\nx\nx\n", "x\n"}, {strings.Repeat("a\nb\nc\n", 50), strings.Repeat("c\nb\na\n", 40)},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, before, after []byte) {
		a, b := splitLines(before), splitLines(after)
		out := DiffLines(before, after)
		if len(a) > 2000 || len(b) > 2000 {
			if len(out) != 1 {
				t.Fatalf("texts of %d and %d lines: %d lines of diff, want one line of summary", len(a), len(b), len(out))
			}
			return
		}
		var gotA, gotB []string
		shared := 0
		for i, l := range out {
			if l == "" {
				t.Fatalf("line %d of the diff is empty", i)
			}
			switch l[0] {
			case ' ':
				gotA, gotB, shared = append(gotA, l[1:]), append(gotB, l[1:]), shared+1
			case '-':
				gotA = append(gotA, l[1:])
				if i+1 < len(out) && out[i+1][0] == '+' {
					t.Fatalf("lines %d and %d of the diff: a dropped line before an added one: %q", i, i+1, out)
				}
			case '+':
				gotB = append(gotB, l[1:])
			default:
				t.Fatalf("line %d of the diff is not marked: %q", i, l)
			}
		}
		if !slices.Equal(gotA, a) || !slices.Equal(gotB, b) {
			t.Fatalf("the diff %q makes %q and %q, want %q and %q", out, gotA, gotB, a, b)
		}
		if len(a)*len(b) <= 1<<20 {
			if want := lcsLength(a, b); shared != want {
				t.Fatalf("the diff %q shares %d lines, the texts %d", out, shared, want)
			}
		}
	})
}

// lcsLength is the length of a longest common subsequence of a and b.
func lcsLength(a, b []string) int {
	prev, row := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				row[j+1] = prev[j] + 1
			} else {
				row[j+1] = max(prev[j+1], row[j])
			}
		}
		prev, row = row, prev
	}
	return prev[len(b)]
}
