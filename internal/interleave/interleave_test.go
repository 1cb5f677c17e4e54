package interleave

import "testing"

// Each way is called once before the timed rounds and once a round after
// between, in order, and a median comes back for each.
func TestMediansCallsEveryWayEachRound(t *testing.T) {
	var order []string
	ways := []Way{{"a", func() { order = append(order, "a") }}, {"b", func() { order = append(order, "b") }}}
	res := testing.Benchmark(func(b *testing.B) {
		order = order[:0]
		p50 := Medians(b, ways, func() { order = append(order, "-") })
		if len(p50) != 2 {
			t.Errorf("%d medians for 2 ways", len(p50))
		}
		want := []string{"a", "b"}
		for range b.N {
			want = append(want, "-", "a", "-", "b")
		}
		if len(order) != len(want) {
			t.Errorf("calls %v, want %v", order, want)
			return
		}
		for i := range want {
			if order[i] != want[i] {
				t.Errorf("calls %v, want %v", order, want)
				return
			}
		}
	})
	if _, ok := res.Extra["a-p50-µs"]; !ok {
		t.Errorf("no a-p50-µs metric in %v", res.Extra)
	}
}
