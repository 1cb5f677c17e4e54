package workflow

import (
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: of two steps stopping side by side, one paused at its limit
// and one awaiting a decision, the workflow took the status of whichever
// stopped first, so it ended paused (exit 3) or awaiting approval (exit
// 4) by chance. The graver stop decides, in either order.
func TestStepsStoppingTogetherGiveOneStatus(t *testing.T) {
	statuses := []checkpoint.Status{checkpoint.StatusPaused, checkpoint.StatusApproval, checkpoint.StatusFailed}
	for i, a := range statuses {
		for j, b := range statuses {
			if got, want := graver(a, b), i > j; got != want {
				t.Errorf("graver(%s, %s) = %v, want %v", a, b, got, want)
			}
		}
	}
}
