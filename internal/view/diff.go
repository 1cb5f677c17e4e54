package view

import (
	"fmt"
	"strings"
)

// DiffLines is a line diff of two texts: the lines of before that after
// drops are marked "-", those it adds "+", those they share " ". It
// marks as few lines as can be (the texts share a longest common
// subsequence of lines), and where lines are replaced it lists those
// added before those dropped. Texts of more than 2,000 lines are
// summarised in one line instead.
//
// Its memory is linear in the texts, for any two of them: it finds the
// shared lines by Myers' O(ND) algorithm with its linear-space refinement
// ("An O(ND) Difference Algorithm and Its Variations", 1986, section
// 4b), where a table of every pair of lines took 32 MB for two texts of
// 2,000 lines.
func DiffLines(before, after []byte) []string {
	a, b := splitLines(before), splitLines(after)
	if len(a) > 2000 || len(b) > 2000 {
		return []string{fmt.Sprintf("%d lines → %d lines", len(a), len(b))}
	}
	if len(a)+len(b) == 0 {
		return nil
	}
	d := newDiffer(a, b)
	d.diff(0, len(a), 0, len(b))
	out := make([]string, 0, len(a)+len(b)-len(d.shared))
	i, j := 0, 0
	for _, s := range append(d.shared, [2]int{len(a), len(b)}) {
		for ; j < s[1]; j++ {
			out = append(out, "+"+b[j])
		}
		for ; i < s[0]; i++ {
			out = append(out, "-"+a[i])
		}
		if i < len(a) {
			out, i, j = append(out, " "+a[i]), i+1, j+1
		}
	}
	return out
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// differ finds the lines two texts share. Each line is a number, equal
// for equal lines, so that comparing two is cheap.
type differ struct {
	a, b []int
	// v1 and v2 are bisect's furthest points on each diagonal, forward
	// and backward, made once for the largest problem and reused.
	v1, v2 []int
	// shared are the pairs (i, j) of a line a[i] kept as b[j], in order.
	shared [][2]int
}

func newDiffer(a, b []string) *differ {
	ids := make(map[string]int, len(a)+len(b))
	number := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	n := 2*((len(a)+len(b)+1)/2) + 2
	return &differ{a: number(a), b: number(b), v1: make([]int, n), v2: make([]int, n)}
}

// diff adds to d.shared the lines a[a0:a1] and b[b0:b1] share: their
// common head and tail, and between them what each half shares, split
// where a shortest edit of one into the other crosses its middle.
func (d *differ) diff(a0, a1, b0, b1 int) {
	for a0 < a1 && b0 < b1 && d.a[a0] == d.b[b0] {
		d.shared = append(d.shared, [2]int{a0, b0})
		a0, b0 = a0+1, b0+1
	}
	tail := 0
	for a0 < a1 && b0 < b1 && d.a[a1-1] == d.b[b1-1] {
		a1, b1, tail = a1-1, b1-1, tail+1
	}
	if a0 < a1 && b0 < b1 {
		x, y := d.bisect(a0, a1, b0, b1)
		d.diff(a0, x, b0, y)
		d.diff(x, a1, y, b1)
	}
	for k := range tail {
		d.shared = append(d.shared, [2]int{a1 + k, b1 + k})
	}
}

// bisect is a point a shortest edit of a[a0:a1] into b[b0:b1] passes
// through, with edits on both sides of it: where the furthest reaching
// paths from the start and from the end, D edits each at most, first
// overlap. Both ranges are non-empty, and differ in their first line and
// in their last, so such an edit has two edits at least.
func (d *differ) bisect(a0, a1, b0, b1 int) (x, y int) {
	a, b := d.a[a0:a1], d.b[b0:b1]
	n, m := len(a), len(b)
	maxD := (n + m + 1) / 2
	off := maxD
	v1, v2 := d.v1[:2*maxD+2], d.v2[:2*maxD+2]
	for i := range v1 {
		v1[i], v2[i] = -1, -1
	}
	v1[off+1], v2[off+1] = 0, 0
	delta := n - m
	front := delta%2 != 0
	// Diagonals whose paths left the ranges are no longer followed.
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	for D := 0; D < maxD; D++ {
		for k1 := -D + k1start; k1 <= D-k1end; k1 += 2 {
			k := off + k1
			x1 := v1[k-1] + 1
			if k1 == -D || (k1 != D && v1[k-1] < v1[k+1]) {
				x1 = v1[k+1]
			}
			y1 := x1 - k1
			for x1 < n && y1 < m && a[x1] == b[y1] {
				x1, y1 = x1+1, y1+1
			}
			v1[k] = x1
			switch {
			case x1 > n:
				k1end += 2
			case y1 > m:
				k1start += 2
			case front:
				if k2 := off + delta - k1; k2 >= 0 && k2 < len(v2) && v2[k2] != -1 && x1 >= n-v2[k2] {
					return a0 + x1, b0 + y1
				}
			}
		}
		for k2 := -D + k2start; k2 <= D-k2end; k2 += 2 {
			k := off + k2
			x2 := v2[k-1] + 1
			if k2 == -D || (k2 != D && v2[k-1] < v2[k+1]) {
				x2 = v2[k+1]
			}
			y2 := x2 - k2
			for x2 < n && y2 < m && a[n-x2-1] == b[m-y2-1] {
				x2, y2 = x2+1, y2+1
			}
			v2[k] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > m:
				k2start += 2
			case !front:
				if k1 := off + delta - k2; k1 >= 0 && k1 < len(v1) && v1[k1] != -1 && v1[k1] >= n-x2 {
					return a0 + v1[k1], b0 + v1[k1] - (k1 - off)
				}
			}
		}
	}
	// Not reached: the paths overlap by maxD edits. Were they not to,
	// every line of a is dropped and every line of b added.
	return a1, b0
}
