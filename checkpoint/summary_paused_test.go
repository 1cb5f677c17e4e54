package checkpoint

import "testing"

// Regression: an agent whose run ended paused with its round still open
// (a delegation waiting on a sub-agent that paused at its own limit) was
// summarised as interrupted, and so listed by `cairn ls` and `cairn show`
// as though its process had been killed. A run that recorded its end is
// summarised with the status it ended with; only a run that never
// recorded one is interrupted. Either way the round is open for resume.
func TestSummaryOfARunEndedWithItsRoundOpen(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for id, ended := range map[string]bool{"paused": true, "killed": false} {
				log := newAgent(t, s, id, 1)
				must(t, log.Append(roundRecords(2)[:2]...)) // a call of round 2 in flight
				if ended {
					must(t, log.Append(Record{Type: RecRunEnded, Time: t0,
						Run: &RunInfo{ID: "run-1", Status: StatusPaused, Reason: "sub-agent alpha stopped"}}))
				}
				must(t, log.Sync())
				must(t, log.Close())
				sum, err := s.Summary(id)
				must(t, err)
				rec, err := s.Read(id)
				must(t, err)
				if !rec.Interrupted() {
					t.Errorf("%s: the open round is not reported to resume", id)
				}
				switch {
				case ended && (sum.Interrupted || sum.Status != StatusPaused):
					t.Errorf("a run that ended paused: %+v; want paused, not interrupted", sum)
				case !ended && (!sum.Interrupted || sum.Status != StatusRunning):
					t.Errorf("a run that never ended: %+v; want interrupted", sum)
				}
			}
		})
	}
}
