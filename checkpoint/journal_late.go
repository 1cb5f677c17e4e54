package checkpoint

import "fmt"

// A LateCommitter is a Log whose commit can return before the round is
// durable, so that the next round's model request and effect-free calls
// overlap the commit's fdatasync.
//
// CommitLate appends recs, the last of them a Commit or Abort record, as
// Commit does, and returns once they are written: the fdatasync that makes
// them, and everything appended before them, durable runs in the
// background. done is called once, from the goroutine that synced, when
// it has returned: with nil, or with the error that kept the round from
// being durable. Until then nothing may tell anyone that the round is
// committed. Appends go on meanwhile and are not durable; the next Commit,
// CommitLate, Sync or Close waits for the sync first and returns its error,
// as does every later one once a sync has failed. A log that cannot sync
// later (one under group commit, or whose commit compacts it) commits at
// once and calls done before it returns.
//
// Settle waits for the commit in flight, if any, and returns its error:
// what must not leave the process before the round is durable (a request
// to a model server, a caller's answer) waits for it.
type LateCommitter interface {
	CommitLate(done func(error), recs ...Record) (int64, error)
	Settle() error
}

// lateSync is a commit's fdatasync running in the background.
type lateSync struct {
	finished chan struct{}
	err      error
	size     int64 // the journal's length it makes durable
}

// CommitLate is Commit whose fdatasync runs in the background (see
// LateCommitter). The next commit is written only once the sync is done:
// recovery takes a commit with a commit after it for durable (see
// journalFrames).
func (l *journalLog) CommitLate(done func(error), recs ...Record) (int64, error) {
	recs, err := l.stamped(recs)
	if err != nil {
		return 0, err
	}
	if err := l.settle(); err != nil {
		return 0, err
	}
	if err := l.write(recs); err != nil {
		return 0, err
	}
	if l.group != nil || l.first != nil || l.compactDue(recs) {
		n, err := l.made(recs)
		if err == nil {
			done(nil)
		}
		return n, err
	}
	s := &lateSync{finished: make(chan struct{}), size: l.size}
	mark := commitMark{base: l.base, round: l.replay.st.Round, journal: l.size}
	f, markFile, round := l.f, l.markFile, l.replay.st.Round
	go func() {
		defer close(s.finished)
		if err := syncData(f); err != nil {
			s.err = fmt.Errorf("make round %d durable: %w", round, err)
			done(s.err)
			return
		}
		if markFile != nil {
			markFile.WriteAt(mark.frame(), 0)
		}
		done(nil)
	}()
	l.late = s
	written := l.round
	l.round = 0
	return written, nil
}

// Settle is settle (see LateCommitter).
func (l *journalLog) Settle() error { return l.settle() }

// settle waits for the commit whose sync runs in the background, if one
// does, and returns its error; once one has failed, every call does.
func (l *journalLog) settle() error {
	if l.lateErr != nil {
		return l.lateErr
	}
	if l.late == nil {
		return nil
	}
	<-l.late.finished
	l.lateErr, l.late = l.late.err, nil
	return l.lateErr
}
