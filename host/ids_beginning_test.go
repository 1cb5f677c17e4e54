package host

import "testing"

// beginsID takes an id cut at a boundary of a sub-agent's id, or in its
// digest, and no other start of it.
func TestBeginsIDAtBoundaries(t *testing.T) {
	const id = "lead.mid-2317e554.alpha-41a03704"
	for prefix, want := range map[string]bool{
		"lead":                     true,
		"lead.mid":                 true,
		"lead.mid-":                true,
		"lead.mid-2317":            true,
		"lead.mid-2317e554":        true,
		"lead.mid-2317e554.alpha":  true,
		"lead.mid-2317e554.alpha-": true,
		"lead.mid-2317e554.al":     false,
		"lead.mi":                  false,
		"lea":                      false,
		"lead.":                    true,
		id:                         false,
		"other":                    false,
	} {
		if got := beginsID(id, prefix); got != want {
			t.Errorf("beginsID(%q, %q) = %v, want %v", id, prefix, got, want)
		}
	}
	if beginsID("lead-2317e554x", "lead") || beginsID("my-agent", "my") {
		t.Error("beginsID took a top-level agent's name cut at its '-'")
	}
}
