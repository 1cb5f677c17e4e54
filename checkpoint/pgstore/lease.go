package pgstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

// lease is an agent's lease as this Store holds it: the epoch every write
// is fenced on, and the goroutine that renews it.
type lease struct {
	s     *Store
	agent string
	epoch int64
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// Lock takes the agent's lease: a transaction on its lease row that
// raises the epoch and names h as the holder until now plus the lease's
// time to live. The lease is renewed while it is held and by every write.
//
// # Errors
//
// A *checkpoint.LockedError naming the holder when another process holds
// an unexpired lease. A holder on this host whose process is gone holds
// nothing, as with the file store's flock.
func (s *Store) Lock(agent string, h checkpoint.Holder) (checkpoint.Lock, error) {
	return s.take(agent, h, false)
}

// Steal takes the agent's lease whoever holds it. The holder it was taken
// from is fenced: its next write fails with a *FencedError and applies
// nothing. For an operator who knows the holder is gone.
func (s *Store) Steal(agent string, h checkpoint.Holder) (checkpoint.Lock, error) {
	return s.take(agent, h, true)
}

// take takes the lease in a transaction, sent again after any failure
// of the connection. A take whose COMMIT the server ran but whose answer
// was lost (the connection dropped after the commit) would otherwise find,
// when sent again, the lease held by this very process and refuse it, or
// fail and leave it taken in the name of a run told it had not taken it:
// so each try whose UPDATE answered is remembered (ours), and a later try
// that finds the lease row exactly as one of them left it holds that
// lease rather than taking it again.
func (s *Store) take(agent string, h checkpoint.Holder, steal bool) (checkpoint.Lock, error) {
	if err := checkpoint.CheckID(agent); err != nil {
		return nil, err
	}
	var epoch int64
	s.mu.Lock()
	ours := s.unsure[agent]
	delete(s.unsure, agent)
	s.mu.Unlock()
	err := s.retry(idempotent, func() error {
		ctx, cancel := s.opContext()
		defer cancel()
		var got takenLease
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			got, err = s.takeTx(ctx, tx, agent, h, steal, ours)
			return err
		})
		if err != nil && got.epoch != 0 {
			ours = append(ours, got)
		}
		epoch = got.epoch
		return err
	})
	if err != nil {
		var le *checkpoint.LockedError
		if errors.As(err, &le) {
			return nil, err
		}
		err = wrapConn(err)
		var re *rowLockedError
		if errors.As(err, &re) {
			re.Row = fmt.Sprintf("the lease row of agent %q (in cairn_leases)", agent)
			re.Sessions = s.longTransactions()
		}
		if len(ours) > 0 && errors.Is(err, ErrUnavailable) {
			err = s.untake(agent, ours, err)
		}
		return nil, fmt.Errorf("lock agent %q: %w", agent, err)
	}
	l := &lease{s: s, agent: agent, epoch: epoch, stop: make(chan struct{}), done: make(chan struct{})}
	s.mu.Lock()
	s.leases[agent] = l
	s.mu.Unlock()
	go l.renew()
	return l, nil
}

// takenLease is the lease row as a take's UPDATE left it: its epoch and
// since, which no other take gives it.
type takenLease struct {
	epoch int64
	since time.Time
}

// untake releases the leases of the takes in ours that may have been
// committed, for a take that failed for want of the database (err), and
// says what became of them. Those it cannot release are remembered, so
// that this Store's next take of the agent holds the one that was
// committed, if one was.
func (s *Store) untake(agent string, ours []takenLease, err error) error {
	for _, t := range ours {
		b := &pgx.Batch{}
		b.Queue(`UPDATE cairn_leases SET released = true, expires = now()
			WHERE agent = $1 AND epoch = $2 AND since = $3 AND NOT released`, agent, t.epoch, t.since)
		if _, rerr := s.sendOnce(b); rerr != nil {
			s.mu.Lock()
			s.unsure[agent] = ours
			s.mu.Unlock()
			return fmt.Errorf("%w; the take may have been committed before its connection failed, and could not be "+
				"released: if it was, the lease (epoch %d) is held in this run's name until it expires in %s, "+
				"or until this process takes the agent again, or `cairn resume` on this host does once this process has ended", err, t.epoch, s.ttl)
		}
	}
	return fmt.Errorf("%w; a take that may have been committed before its connection failed was released: nothing is held", err)
}

// newLeaseSQL makes the lease row of an agent or a workflow, released, if
// it has none. A row may be missing because none was ever made, or
// because it was deleted (by hand to revoke the lease, or left out of a
// restore) while a holder of it may still be writing at the epoch the
// row had: which of the two, nothing says for sure (an agent or workflow
// with no row of its own yet may have a holder already, that took the
// lease to make it). So every new row's epoch starts at the transaction's
// id, past every epoch this cluster has given (each take is a transaction
// of its own, whose id is higher than any before it, and raises an epoch
// by one), and the next take fences any such holder rather than giving
// the next taker its epoch.
const newLeaseSQL = `INSERT INTO cairn_leases (agent, epoch) VALUES ($1, txid_current()) ON CONFLICT DO NOTHING`

// takeTx takes the lease row in tx, or fails with its holder; or, when
// the row is as one of ours left it (a take of this call whose commit's
// answer was lost), holds that lease, renewed.
func (s *Store) takeTx(ctx context.Context, tx pgx.Tx, agent string, h checkpoint.Holder, steal bool,
	ours []takenLease) (takenLease, error) {
	if _, err := tx.Exec(ctx, newLeaseSQL, agent); err != nil {
		return takenLease{}, err
	}
	// The schema's version is read with the lease row, in the same round
	// trip: a take is a write that no fence checks (the fence is of a lease
	// held), and a schema newer than this build's refuses it, as the fence
	// refuses every later write, with nothing changed.
	var cur leaseRow
	var newest int
	if err := cur.scan(tx.QueryRow(ctx, `SELECT `+leaseCols+`, (SELECT max(version) FROM cairn_schema)
		FROM cairn_leases WHERE agent = $1 FOR UPDATE`, agent), &newest); err != nil {
		return takenLease{}, err
	}
	if newest > s.version {
		return takenLease{}, &checkpoint.FutureSchemaError{File: "the database's cairn schema", Version: newest, Supported: s.version}
	}
	for _, t := range ours {
		if !cur.released && cur.epoch == t.epoch && cur.holder.Started.Equal(t.since) && cur.space == s.space &&
			cur.holder.Host == h.Host && cur.holder.PID == h.PID && cur.holder.Run == h.Run {
			_, err := tx.Exec(ctx, `UPDATE cairn_leases SET expires = now() + $2 * interval '1 millisecond'
				WHERE agent = $1`, agent, s.ttl.Milliseconds())
			return t, err
		}
	}
	if !steal && cur.running() {
		return takenLease{}, &checkpoint.LockedError{Agent: agent, Holder: cur.holder, Lease: true, Expires: cur.expires}
	}
	var t takenLease
	err := tx.QueryRow(ctx, `UPDATE cairn_leases SET epoch = epoch + 1, released = false,
		holder_host = $2, holder_pid = $3, holder_run = $4, since = now(),
		expires = now() + $5 * interval '1 millisecond', holder_space = $6
		WHERE agent = $1 RETURNING epoch, since`, agent, h.Host, h.PID, h.Run, s.ttl.Milliseconds(), s.space).Scan(&t.epoch, &t.since)
	return t, err
}

// leaseRow is what the store reads of a lease row to judge whether its
// holder runs the agent.
type leaseRow struct {
	released  bool
	unexpired bool // by the database's clock
	holder    checkpoint.Holder
	expires   time.Time
	epoch     int64
	space     string // where the holder's pid names it (thisSpace)
}

// leaseCols are the columns leaseRow.scan reads.
const leaseCols = `released, expires > now(), holder_host, holder_pid, holder_run, since, expires, epoch, holder_space`

// scan reads leaseCols from row, and then the columns of more, when the
// query has more.
func (r *leaseRow) scan(row pgx.Row, more ...any) error {
	h := &r.holder
	return row.Scan(append([]any{&r.released, &r.unexpired, &h.Host, &h.PID, &h.Run, &h.Started, &r.expires,
		&r.epoch, &r.space}, more...)...)
}

// Lease is an agent's lease as Running reads it.
type Lease struct {
	Holder  checkpoint.Holder
	Expires time.Time // unless its holder renews it
	Epoch   int64
}

// Running reads the agent's lease and reports whether a process runs the
// agent, by the rule Summary's Locked uses (leaseRow.running): false for
// an agent that has no lease, or whose lease no live holder holds.
func (s *Store) Running(agent string) (Lease, bool, error) {
	if err := checkpoint.CheckID(agent); err != nil {
		return Lease{}, false, err
	}
	ctx, cancel := s.opContext()
	defer cancel()
	var r leaseRow
	err := r.scan(s.pool.QueryRow(ctx, `SELECT `+leaseCols+` FROM cairn_leases WHERE agent = $1`, agent))
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, false, nil
	}
	if err != nil {
		return Lease{}, false, fmt.Errorf("read the lease of agent %s: %w", agent, wrapConn(err))
	}
	return Lease{Holder: r.holder, Expires: r.expires, Epoch: r.epoch}, r.running(), nil
}

// running is the one rule by which the store judges whether a lease's
// holder runs the agent — to refuse a take, and to say Locked in a
// Summary, by which `cairn ls` and `show` say running and `cairn pause`
// agrees to ask — so that an agent shown running is one a take is refused:
// the lease is held and unexpired, and its holder is not a process of this
// host that is gone (killed with -9), which holds nothing, as with flock.
func (r leaseRow) running() bool {
	return !r.released && r.unexpired && !gone(r.holder, r.space)
}

// gone reports whether the holder is a process of this host that no
// longer exists. A host name is no proof of the same machine (containers
// given one --hostname, images cloned with theirs), so a holder is judged
// by its pid only when it was in this process's space (thisSpace): the
// same kernel boot and PID namespace. A holder that says no space (an
// older cairn's) is judged by its host name alone, as before.
func gone(h checkpoint.Holder, space string) bool {
	host, _ := os.Hostname()
	if h.Host != host || h.PID <= 0 || space != "" && space != localSpace() {
		return false
	}
	return syscall.Kill(h.PID, 0) == syscall.ESRCH
}

// localSpace is thisSpace, read once.
var localSpace = sync.OnceValue(thisSpace)

// thisSpace names where this process's pid names it: the kernel's boot id
// and the PID namespace the process is in, as Linux tells them; "" where
// they cannot be read.
func thisSpace() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + " " + ns
}

// renew extends the lease every third of its time to live until it is
// released or found taken over. A renewal that fails for want of the
// database is tried again at the next tick: the lease may expire
// meanwhile, and then the next write finds out whether it was taken.
func (l *lease) renew() {
	defer close(l.done)
	t := time.NewTicker(l.s.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := l.s.opContext()
		_, err := l.s.pool.Exec(ctx, fenceSQL, l.agent, l.epoch, l.s.ttl.Milliseconds(), l.s.version)
		cancel()
		if isFence(err) {
			return
		}
	}
}

// stopRenewing stops the renewal goroutine and waits for it.
func (l *lease) stopRenewing() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
}

// Unlock releases the lease if it is still held at its epoch. Releasing
// it twice is releasing it once, so a failure of the connection sends it
// again: a release lost to a restart would keep the agent from another
// node until the lease expired.
func (l *lease) Unlock() error {
	l.stopRenewing()
	l.s.mu.Lock()
	if l.s.leases[l.agent] == l {
		delete(l.s.leases, l.agent)
	}
	l.s.mu.Unlock()
	// Not behind schemaCheckSQL: a release on a schema migrated since sets
	// what every version has, and refusing it would keep the agent from
	// the upgraded nodes until the lease expired.
	b := &pgx.Batch{}
	b.Queue(`UPDATE cairn_leases SET released = true, expires = now() WHERE agent = $1 AND epoch = $2`, l.agent, l.epoch)
	if _, err := l.s.sendRetry(b, idempotent); err != nil {
		err = wrapConn(err)
		return fmt.Errorf("release lease of agent %q: %w", l.agent, err)
	}
	return nil
}

// fencedHook, when set by a test, is called once a write is refused by
// its fence, before the lease row is read for its error.
var fencedHook func()

// fenced reads who holds the agent now, for the error of a writer whose
// lease at epoch was lost; a row it cannot read is said so (Unread).
func (s *Store) fenced(agent string, epoch int64) error {
	if fencedHook != nil {
		fencedHook()
	}
	ctx, cancel := s.opContext()
	defer cancel()
	e := &FencedError{Agent: agent, Epoch: epoch}
	var released bool
	err := s.pool.QueryRow(ctx, `SELECT epoch, released, holder_host, holder_pid, holder_run, since
		FROM cairn_leases WHERE agent = $1`, agent).
		Scan(&e.NowEpoch, &released, &e.Now.Host, &e.Now.PID, &e.Now.Run, &e.Now.Started)
	if err != nil || released {
		e.Now = checkpoint.Holder{}
	}
	e.RowGone = errors.Is(err, pgx.ErrNoRows)
	if err != nil && !e.RowGone {
		e.NowEpoch, e.Unread = 0, wrapConn(err)
	}
	return e
}

// held is the lease this Store holds on agent, or ErrNoLease.
func (s *Store) held(agent string) (*lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.leases[agent]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("agent %q: %w: take it with Lock first", agent, ErrNoLease)
}

// longTransactions names the other sessions of the database whose
// transaction has been open longer than lock_timeout, for the error of a
// take that waited that long for the lease row: one of them holds it.
func (s *Store) longTransactions() string {
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT format('pid %s (%s%s, open since %s)', pid, coalesce(state, 'unknown state'),
			CASE WHEN application_name <> '' THEN ', ' || application_name ELSE '' END,
			to_char(xact_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
		FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()
			AND xact_start < now() - current_setting('lock_timeout')::interval
		ORDER BY xact_start LIMIT 5`)
	if err != nil {
		return ""
	}
	said, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return ""
	}
	return strings.Join(said, "; ")
}
