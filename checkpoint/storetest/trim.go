package storetest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// A store that trims rounds (Collect with Retention.Rounds) keeps the
// number of every line of the history it keeps: the history starts with
// a checkpoint.TrimmedEvents warning that counts every line removed, by
// this trim and those before, and the lines kept follow it as they were.
// A follower of the history goes on by those numbers across a trim.
func testTrimKeepsLineNumbers(t *testing.T, s checkpoint.Store) {
	c, ok := s.(interface {
		Collect(checkpoint.Retention) (*checkpoint.Collected, error)
	})
	if !ok {
		t.Skipf("%T does not trim rounds", s)
	}
	a := create(t, s, "a1", 0)
	var all []string
	write := func(format string, args ...any) {
		w, err := s.Events("a1")
		must(t, err)
		line := fmt.Sprintf(`{"time":"2026-01-02T03:04:05.%03dZ","agent":"a1","run":"run-1",`, len(all)) + fmt.Sprintf(format, args...) + "}"
		_, err = io.WriteString(w, line+"\n")
		must(t, err)
		must(t, w.Close())
		all = append(all, line)
	}
	write(`"type":"run_start"`)
	for r := 1; r <= 12; r++ {
		commitRound(t, a.log, r, 0)
		for _, typ := range []string{"model_turn", "tool_end", "round_end"} {
			write(`"type":%q,"round":%d`, typ, r)
		}
	}
	write(`"type":"run_end"`)
	a.release()
	for _, keep := range []int{8, 3} {
		got, err := c.Collect(checkpoint.Retention{Rounds: keep})
		must(t, err)
		if len(got.Trimmed) == 0 {
			t.Fatalf("keep %d rounds: nothing trimmed: %+v", keep, got)
		}
		r, err := s.ReadEvents("a1")
		must(t, err)
		lines := strings.Split(strings.TrimSuffix(readAll(t, r), "\n"), "\n")
		var w checkpoint.TrimmedEvents
		must(t, json.Unmarshal([]byte(lines[0]), &w))
		first := 12 - keep + 1
		if w.Type != "warning" || w.Run != "" || w.Round != first || int(w.Removed) != 1+(first-1)*3 {
			t.Fatalf("keep %d rounds: the history starts %s", keep, lines[0])
		}
		if fmt.Sprint(lines[1:]) != fmt.Sprint(all[w.Removed:]) {
			t.Fatalf("keep %d rounds: the lines after the warning are\n%s\nwant the lines from %d on:\n%s", keep,
				strings.Join(lines[1:], "\n"), w.Removed+1, strings.Join(all[w.Removed:], "\n"))
		}
	}
}
