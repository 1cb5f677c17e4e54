package host

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// The past file is never synced, so a power cut may keep a later page of
// it and lose an earlier one. Resuming then failed, the file "corrupt",
// when the lost page lay after the frame the file's index names last, and
// otherwise went on but left the pasts unreadable to log, fork and
// travel, although the journal was whole either way. Now the pasts from the damage on are dropped: the
// resume finds the newest past before it, keeps the whole workspace at
// its boundary, and its rounds can be forked again; only the lost rounds
// cannot.
func TestTornPastFileDoesNotFailTheResume(t *testing.T) {
	t.Run("before the indexed frame", func(t *testing.T) { tornPastResume(t, false) })
	t.Run("after the indexed frame", func(t *testing.T) { tornPastResume(t, true) })
}

// tornPastResume loses a page of the past file of an agent of 40 rounds,
// before or after round 32's past (the last the index names), resumes
// the agent and checks its pasts.
func tornPastResume(t *testing.T, afterIndexed bool) {
	const rounds = 40
	eng, store := manyRounds(t, rounds)
	name := filepath.Join(store.Dir(), "agents", "a", "past")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	page, indexed := os.Getpagesize(), frameOffset(data, 32)
	p := 1
	if afterIndexed {
		p = indexed/page + 1
	}
	if (p+1)*page >= len(data) || (p*page < indexed) == afterIndexed {
		t.Fatalf("the past file is %d bytes, round 32's past at %d: the test needs page %d before its last, and %v it", len(data), indexed, p, afterIndexed)
	}
	clear(data[p*page : (p+1)*page]) // lost; the pages after it were written back
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Resume(context.Background(), ResumeOptions{ID: "a", Limits: RunLimits{MaxRounds: rounds + 2}})
	if err != nil || res.Status != StatusPaused || res.Rounds != rounds+2 {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	pasts, err := store.Pasts("a")
	if err != nil || len(pasts) < 4 {
		t.Fatalf("pasts: %d, %v", len(pasts), err)
	}
	kept := len(pasts) - 3
	for i, p := range pasts {
		want := i
		if i >= kept {
			want = rounds + i - kept
		}
		if p.Round != want {
			t.Fatalf("past %d is of round %d, want %d (the first %d survived the cut)", i, p.Round, want, kept)
		}
	}
	if pasts[kept].Base == "" {
		t.Fatalf("the resume kept no whole workspace at round %d", rounds)
	}
	for _, n := range []int{1, rounds + 2} {
		ws := filepath.Join(t.TempDir(), "ws")
		if _, err := eng.Fork(t.Context(), ForkOptions{ID: "a", Past: true, AtRound: n, As: fmt.Sprintf("at-%d", n), Workspace: ws}); err != nil {
			t.Fatalf("fork at round %d: %v", n, err)
		}
		if readFile(t, ws, fmt.Sprintf("f%d.txt", n)) != fmt.Sprintf("round %d", n) {
			t.Fatalf("the fork at round %d has not the workspace of round %d", n, n)
		}
	}
	_, err = eng.Fork(t.Context(), ForkOptions{ID: "a", Past: true, AtRound: kept, As: "lost", Workspace: filepath.Join(t.TempDir(), "ws")})
	if !errors.Is(err, checkpoint.ErrNoPast) {
		t.Fatalf("fork at round %d, whose past was lost: %v, want ErrNoPast", kept, err)
	}
}

// frameOffset is where the n-th frame of a past file starts: a frame is
// its payload's length (4 bytes, little-endian), its type and checksum
// (5), and the payload.
func frameOffset(data []byte, n int) int {
	off := 0
	for range n {
		off += 9 + int(binary.LittleEndian.Uint32(data[off:]))
	}
	return off
}
