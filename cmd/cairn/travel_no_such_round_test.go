package main

import (
	"strings"
	"testing"
)

// Regression: after `cairn gc --keep-rounds`, a fork, diff or log of a
// round the agent never had (after its last, or below 0) was refused as
// one gc had removed, pointing at gc. It says the agent has no such
// round, names its last round and the rounds that can be forked at and
// seen, and exits 2; a round gc did remove is still refused as removed.
// The file store and PostgreSQL say the same.
func TestTravelToARoundThatNeverWasSaysSoWithAndWithoutATrim(t *testing.T) {
	t.Parallel()
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		store, _ := gcRoundsAgent(t) // rounds 1 to 26
		noSuchRound(t, store, "w", "before 17")
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url, _ := pgRoundsAgent(t, "w")
		noSuchRound(t, url, "w", "before 17")
	})
}

// noSuchRound checks the refusals of rounds agent id of 26 rounds never
// had in store, before and after `cairn gc --keep-rounds 10`, whose
// output says trimmed.
func noSuchRound(t *testing.T, store, id, trimmed string) {
	check := func(t *testing.T, kept string, removed bool) {
		t.Helper()
		for _, args := range [][]string{
			{"fork", "--at-round", "40"}, {"fork", "--at-round", "27"}, {"fork", "--at-round", "-1"},
			{"diff", "--round", "40"}, {"diff", "--round", "-1"},
			{"log", "--round", "40"}, {"log", "--round", "-1"},
		} {
			code, out, errOut := cairnProcess(t, append(append(args, "--store", store), id)...)
			if code != exitUsage || !strings.Contains(errOut, `agent "`+id+`" has no round `+args[2]+": its last round is 26") ||
				!strings.Contains(errOut, kept) || strings.Contains(errOut, "removed") || strings.Contains(errOut, "no changes kept") {
				t.Errorf("%s: exit %d %s%s", strings.Join(args, " "), code, out, errOut)
			}
		}
		if !removed {
			return
		}
		code, _, errOut := cairnProcess(t, "fork", "--store", store, "--at-round", "5", id)
		if code != exitUsage || !strings.Contains(errOut, "round 5") || !strings.Contains(errOut, "`cairn gc --keep-rounds` removed") {
			t.Errorf("fork at a round gc removed: exit %d %s", code, errOut)
		}
	}
	check(t, "(kept: rounds 0 to 26)", false)
	if code, out, errOut := cairnProcess(t, "gc", "--store", store, "--keep-rounds", "10"); code != exitDone || !strings.Contains(out, trimmed) {
		t.Fatalf("gc: exit %d %s%s", code, out, errOut)
	}
	check(t, "(kept: rounds 16 to 26: the oldest round to fork at is 16, the oldest whose changes and messages can be seen is 17)", true)
}
