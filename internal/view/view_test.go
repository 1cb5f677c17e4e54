package view

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

func TestDiffLinesMarksDroppedAddedAndShared(t *testing.T) {
	got := DiffLines([]byte("a\nb\nc\n"), []byte("a\nc\nd\n"))
	want := []string{" a", "-b", " c", "+d"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DiffLines = %q, want %q", got, want)
	}
}

func TestIsTextRefusesNULAndInvalidUTF8(t *testing.T) {
	for in, want := range map[string]bool{"plain\n": true, "a\x00b": false, "\xff\xfe": false, "": true} {
		if got := IsText([]byte(in)); got != want {
			t.Errorf("IsText(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestTreeOrderPutsChildrenUnderTheirParent(t *testing.T) {
	list := []checkpoint.Summary{{ID: "b", Parent: "a"}, {ID: "orphan", Parent: "gone"}, {ID: "a"}, {ID: "c", Parent: "b"}}
	out, depth := TreeOrder(list)
	var ids []string
	for _, s := range out {
		ids = append(ids, s.ID)
	}
	if want := []string{"orphan", "a", "b", "c"}; !reflect.DeepEqual(ids, want) || !reflect.DeepEqual(depth, []int{0, 0, 1, 2}) {
		t.Fatalf("TreeOrder = %v %v", ids, depth)
	}
}

// Regression: a sub-agent whose state could not be read was listed at
// the top, apart from its tree, its lineage being in what was unread. It
// is placed under the agent its id names.
func TestTreeOrderPutsAnUnreadableChildUnderItsParent(t *testing.T) {
	bad := errors.New("bad journal")
	list := []checkpoint.Summary{{ID: "apt.k1-2aa40150", Err: bad}, {ID: "apt"}, {ID: "apt.k1-2aa40150.k2-0f", Err: bad}, {ID: "lone.x", Err: bad}}
	out, depth := TreeOrder(list)
	var ids []string
	for _, s := range out {
		ids = append(ids, s.ID)
	}
	if want := []string{"apt", "apt.k1-2aa40150", "apt.k1-2aa40150.k2-0f", "lone.x"}; !reflect.DeepEqual(ids, want) || !reflect.DeepEqual(depth, []int{0, 1, 2, 0}) {
		t.Fatalf("TreeOrder = %v %v", ids, depth)
	}
}

func TestLineOfSaysWhyAnAgentIsUnreadable(t *testing.T) {
	l := LineOf(checkpoint.Summary{ID: "x", Err: errors.New("bad journal")})
	if l.Status != "unreadable" || l.Error != "bad journal" {
		t.Fatalf("LineOf = %+v", l)
	}
}

func TestFormatTodosMarksEachStatus(t *testing.T) {
	got := FormatTodos([]checkpoint.Todo{{Text: "plan", Status: checkpoint.TodoDone}, {Text: "build", Status: checkpoint.TodoInProgress}, {Text: "ship", Status: checkpoint.TodoPending}})
	if want := "[x] plan\n[~] build\n[ ] ship"; got != want {
		t.Fatalf("FormatTodos = %q, want %q", got, want)
	}
	if FormatTodos(nil) != "(empty)" {
		t.Fatal("an empty list is not shown as (empty)")
	}
}
