package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairnrun/cairn/checkpoint"
)

// Store keeps agents in a PostgreSQL database. It is safe for concurrent
// use; each agent is guarded by its lease.
type Store struct {
	pool *pgxpool.Pool
	cfg
	mu     sync.Mutex
	leases map[string]*lease // the leases this Store holds
	events map[string][]byte // event lines not yet written, by agent
	group  grouper           // the agents' writes waiting to share a transaction
	listed listed            // the agents' summaries as List last read them
	// flights are the chunked blobs being written, by digest (PutBlob).
	flights map[string]*blobFlight
	// unsure are the takes of a lease that may have been committed, by
	// agent, of a take that failed (lease.go, untake).
	unsure    map[string][]takenLease
	blobWaits int // how often a chunked blob's write found another session writing it (for tests)
}

var _ checkpoint.Store = (*Store)(nil)

type cfg struct {
	ttl     time.Duration
	timeout time.Duration
	alone   bool   // no group commit
	schema  string // the namespace's schema; "" for the default
	version int    // the schema version this build writes, which every fence checks
	space   string // where this process's pid names it, written with every lease it takes
}

// Option configures a Store.
type Option func(*cfg)

// DefaultLeaseTTL is how long a lease outlives its holder's last renewal.
const DefaultLeaseTTL = 30 * time.Second

// WithLeaseTTL sets how long a lease outlives its holder's last renewal
// (DefaultLeaseTTL). A holder renews it every third of that.
func WithLeaseTTL(d time.Duration) Option { return func(c *cfg) { c.ttl = d } }

// WithoutGroupCommit sends every write of every agent in a transaction
// of its own, as the store did before group commit; for comparison.
func WithoutGroupCommit() Option { return func(c *cfg) { c.alone = true } }

// WithNamespace keeps the store's agents in namespace ns (see
// checkpoint.CheckNamespace): a schema of its own, cairn_ns_<ns>, with
// every table of the store, made and migrated on first use. The default
// namespace ("" or "default") is the tables of the connection's
// search_path, as before namespaces.
func WithNamespace(ns string) Option {
	return func(c *cfg) {
		if ns != "" && ns != checkpoint.DefaultNamespace {
			c.schema = "cairn_ns_" + ns
		}
	}
}

// WithTimeout bounds each of the store's operations, Open's connection
// and migration among them (30 s by default), so that a database out of
// reach fails a run instead of hanging it.
func WithTimeout(d time.Duration) Option { return func(c *cfg) { c.timeout = d } }

// Open connects to the database at url (postgres://… or postgresql://…,
// the scheme in any case, or a key=value connection string: see
// IsConnString) and brings its schema to this build's version. The
// parameter lease_ttl (a Go duration, "10s"), of a URL or a key=value
// string, sets the lease's time to live, as WithLeaseTTL does; it is not
// passed to the server.
//
// # Errors
//
// A *checkpoint.FutureSchemaError, with nothing changed, when the
// database was set up by a newer cairn; ErrUnavailable when it cannot be
// reached; ErrBadURL when url cannot be read; ErrBadNamespace for a
// namespace that cannot be one. No error repeats a password url holds.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	c := cfg{ttl: DefaultLeaseTTL, timeout: 30 * time.Second, version: SchemaVersion(), space: localSpace()}
	url, err := leaseFromURL(url, &c)
	if err != nil {
		return nil, fmt.Errorf("open store: %w: %w", ErrBadURL, err)
	}
	for _, o := range opts {
		o(&c)
	}
	if err := checkpoint.CheckNamespace(strings.TrimPrefix(c.schema, "cairn_ns_")); err != nil {
		return nil, fmt.Errorf("open store: %w: %w", ErrBadNamespace, err)
	}
	if c.ttl <= 0 || c.timeout <= 0 {
		return nil, fmt.Errorf("open store: the lease's time to live and the timeout must be positive")
	}
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open store: %w: %w", ErrBadURL, err)
	}
	if err := libpqKeepalives(pc.ConnConfig); err != nil {
		return nil, fmt.Errorf("open store: %w: %w", ErrBadURL, err)
	}
	if _, set := pc.ConnConfig.RuntimeParams["lock_timeout"]; !set {
		// A row held by a transaction that does not end (see
		// rowLockedError) fails the write that waits for it well before
		// the store's timeout, saying so, rather than as the timeout.
		pc.ConnConfig.RuntimeParams["lock_timeout"] = strconv.FormatInt((c.timeout / 3).Milliseconds(), 10)
	}
	for k, v := range deadPeerParams(c.ttl) {
		if _, set := pc.ConnConfig.RuntimeParams[k]; !set {
			pc.ConnConfig.RuntimeParams[k] = v
		}
	}
	if c.schema != "" {
		pc.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{c.schema}.Sanitize()
	}
	// Bounded as every operation is: a server that accepts connections
	// and never answers them (its host hung, its postmaster stopped) would
	// otherwise keep a caller whose ctx has no deadline waiting for ever.
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", wrapConn(err))
	}
	if err := migrate(ctx, pool, c.schema); err != nil {
		pool.Close()
		if w := wrapConn(err); errors.Is(w, ErrUnavailable) {
			err = w
		}
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &Store{pool: pool, cfg: c, leases: map[string]*lease{}, events: map[string][]byte{},
		flights: map[string]*blobFlight{}, unsure: map[string][]takenLease{}}, nil
}

// deadPeerParams are the server's settings, for a session of a store
// whose lease lives ttl, that end the session of a node gone without a
// word (its power lost, its network cut: no FIN or RST reaches the
// server) within about ttl, rather than after the hours of the operating
// system's TCP keepalive: that session may hold the agent's lease row in
// a transaction it never ends, and no other node can take the agent
// until it is gone. The server probes a connection silent for a third of
// ttl every sixth of it, and gives it up after three probes unanswered
// or when what it sent stays unacknowledged for ttl. They act on a TCP
// connection only; a unix socket's peer cannot vanish so.
func deadPeerParams(ttl time.Duration) map[string]string {
	secs := func(d time.Duration) string { return strconv.FormatInt(max(1, int64(d/time.Second)), 10) }
	return map[string]string{
		"tcp_keepalives_idle":     secs(ttl / 3),
		"tcp_keepalives_interval": secs(ttl / 6),
		"tcp_keepalives_count":    "3",
		"tcp_user_timeout":        strconv.FormatInt(max(1000, ttl.Milliseconds()), 10),
	}
}

// libpqKeepalives takes libpq's keepalive keywords (keepalives,
// keepalives_idle, keepalives_interval, keepalives_count) out of the
// session's settings, where pgx puts them and the server refuses them,
// and sets the client's socket with them, as libpq does: keepalives=0
// turns the probes off, the others are seconds and a count.
func libpqKeepalives(cc *pgx.ConnConfig) error {
	ka := net.KeepAliveConfig{Enable: true}
	found := false
	for _, k := range []string{"keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count"} {
		v, ok := cc.RuntimeParams[k]
		if !ok {
			continue
		}
		delete(cc.RuntimeParams, k)
		found = true
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%s=%q: want a whole number (of seconds, for keepalives_idle and keepalives_interval)", k, v)
		}
		switch k {
		case "keepalives":
			ka.Enable = n != 0
		case "keepalives_idle":
			ka.Idle = time.Duration(n) * time.Second
		case "keepalives_interval":
			ka.Interval = time.Duration(n) * time.Second
		case "keepalives_count":
			ka.Count = n
		}
	}
	if found {
		d := &net.Dialer{Timeout: cc.ConnectTimeout, KeepAliveConfig: ka}
		if !ka.Enable {
			d.KeepAlive = -1
		}
		cc.DialFunc = d.DialContext
	}
	return nil
}

// leaseFromURL takes the lease_ttl parameter out of a URL or a key=value
// connection string, and gives a URL's scheme in lower case, as pgx
// reads it.
func leaseFromURL(raw string, c *cfg) (string, error) {
	raw = lowerScheme(raw)
	if !isURL(raw) {
		return leaseFromKeywords(raw, c)
	}
	if err := checkUserinfo(raw); err != nil {
		return "", err
	}
	u, err := neturl.Parse(raw)
	if err != nil {
		return raw, nil // pgx says what is wrong with it
	}
	q := u.Query()
	v := q.Get("lease_ttl")
	if v == "" {
		return raw, nil
	}
	if err := setTTL(v, c); err != nil {
		return "", err
	}
	q.Del("lease_ttl")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// checkUserinfo refuses a URL whose user name or password holds an "@"
// that is not percent-encoded. pgx ends the password at the first "@" and
// takes the rest of it for the host name, which a failed lookup would then
// show; the URL is refused instead, and the message repeats none of it.
func checkUserinfo(raw string) error {
	_, rest, _ := strings.Cut(raw, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if strings.Count(rest, "@") > 1 {
		return errors.New(`the URL's user name or password holds an "@": write it %40`)
	}
	return nil
}

var kvLeaseTTL = regexp.MustCompile(`(^|\s)lease_ttl\s*=\s*(\S*)`)

// leaseFromKeywords takes lease_ttl=… out of a key=value string; the
// last one given counts, as for libpq's keywords.
func leaseFromKeywords(raw string, c *cfg) (string, error) {
	for m := kvLeaseTTL.FindStringSubmatchIndex(raw); m != nil; m = kvLeaseTTL.FindStringSubmatchIndex(raw) {
		if err := setTTL(raw[m[4]:m[5]], c); err != nil {
			return "", err
		}
		raw = raw[:m[0]] + raw[m[1]:]
	}
	return raw, nil
}

func setTTL(v string, c *cfg) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("lease_ttl=%q: want a duration such as 10s", v)
	}
	c.ttl = d
	return nil
}

// Close releases the leases this Store still holds and its connections.
func (s *Store) Close() {
	s.mu.Lock()
	var ls []*lease
	for _, l := range s.leases {
		ls = append(ls, l)
	}
	s.mu.Unlock()
	for _, l := range ls {
		l.Unlock()
	}
	s.pool.Close()
}

func (s *Store) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

// Exists reports whether the agent has state. It has no error to give,
// and its callers take false for an agent that is not there (a sub-agent
// gone, an id free to make): so a read that meets a restart is asked
// again on a new connection, as a write is, and one the database does not
// answer within the store's timeout (or fails otherwise) says true, so
// that the caller's read of the agent says what is wrong.
func (s *Store) Exists(agent string) bool {
	var ok bool
	err := s.retry(idempotent, func() error {
		ctx, cancel := s.opContext()
		defer cancel()
		return s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cairn_agents WHERE id = $1)`, agent).Scan(&ok)
	})
	return err != nil || ok
}

// Create starts a new agent at st. The caller holds its lease.
func (s *Store) Create(agent string, st *checkpoint.State) (checkpoint.Log, error) {
	l, err := s.held(agent)
	if err != nil {
		return nil, err
	}
	snap, err := checkpoint.EncodeState(st)
	if err != nil {
		return nil, fmt.Errorf("create agent %q: %w", agent, err)
	}
	b := s.fence(l, &pgx.Batch{})
	b.Queue(`INSERT INTO cairn_agents (id, snapshot, base, snapshot_crc) VALUES ($1, $2, 0, $3) ON CONFLICT DO NOTHING`,
		agent, snap, sum(snap))
	tags, err := s.send(l, b)
	if err != nil {
		return nil, fmt.Errorf("create agent %q: %w", agent, err)
	}
	if tags[1] == 0 {
		return nil, fmt.Errorf("create agent %q: %w", agent, checkpoint.ErrExists)
	}
	return newLog(s, l, &checkpoint.Recovered{State: st, SnapshotBytes: int64(len(snap))}, 0, 0), nil
}

// Open recovers an agent for writing. The caller holds its lease. A read
// that meets a restart of the database is sent again on a new connection,
// as a write is, so that a resume goes on through a restart as a run does.
func (s *Store) Open(agent string) (*checkpoint.Recovered, checkpoint.Log, error) {
	l, err := s.held(agent)
	if err != nil {
		return nil, nil, err
	}
	rec, next, base, err := s.read(agent, idempotent)
	if err != nil {
		return nil, nil, err
	}
	return rec, newLog(s, l, rec, next, base), nil
}

// Read recovers an agent without its lease, changing nothing.
func (s *Store) Read(agent string) (*checkpoint.Recovered, error) {
	if err := checkpoint.CheckID(agent); err != nil {
		return nil, err
	}
	rec, _, _, err := s.read(agent, nil)
	return rec, err
}

// read reads the agent's snapshot and replays the journal after it, in
// one snapshot of the database, sending it again as the rule again allows
// (nil: never). next is the sequence number the next record takes, base
// the first after the snapshot.
func (s *Store) read(agent string, again retryRule) (rec *checkpoint.Recovered, next, base int64, err error) {
	if again == nil {
		again = func(error) bool { return false }
	}
	err = s.retry(again, func() error {
		ctx, cancel := s.opContext()
		defer cancel()
		return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
			func(tx pgx.Tx) error {
				var err error
				rec, next, base, err = readTx(ctx, tx, agent)
				return err
			})
	})
	var rowErr *CorruptRowError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, 0, 0, fmt.Errorf("agent %q: %w", agent, checkpoint.ErrNotFound)
	case errors.As(err, &rowErr):
		return nil, 0, 0, err // it names the agent
	case err != nil:
		return nil, 0, 0, fmt.Errorf("read agent %q: %w", agent, wrapConn(err))
	}
	return rec, next, base, nil
}

func readTx(ctx context.Context, tx pgx.Tx, agent string) (*checkpoint.Recovered, int64, int64, error) {
	var snap []byte
	var base, durable int64
	var snapSum, first *int64
	if err := tx.QueryRow(ctx, `SELECT snapshot, base, durable, snapshot_crc, `+firstSeq+` FROM cairn_agents WHERE id = $1`, agent).
		Scan(&snap, &base, &durable, &snapSum, &first); err != nil {
		return nil, 0, 0, err
	}
	if err := baseDamage(agent, base, durable, first); err != nil {
		return nil, 0, 0, err
	}
	if sumMismatch(snapSum, sum(snap)) {
		return nil, 0, 0, corruptRow(agent, "cairn_agents", "snapshot", badSum)
	}
	st, err := checkpoint.DecodeState("snapshot of agent "+agent, snap)
	var ce *checkpoint.CorruptError
	if errors.As(err, &ce) {
		return nil, 0, 0, corruptRow(agent, "cairn_agents", "snapshot", ce.Reason)
	}
	if err != nil {
		return nil, 0, 0, err
	}
	rows, err := tx.Query(ctx, `SELECT seq, type, payload, crc FROM cairn_journal WHERE agent = $1 AND seq >= $2 ORDER BY seq`, agent, base)
	if err != nil {
		return nil, 0, 0, err
	}
	defer rows.Close()
	r := checkpoint.NewReplay(st, nil)
	next, size := base, int64(0)
	for rows.Next() {
		var seq int64
		var typ int16
		var payload []byte
		var crc *int64
		if err := rows.Scan(&seq, &typ, &payload, &crc); err != nil {
			return nil, 0, 0, err
		}
		if seq != next {
			return nil, 0, 0, corruptRow(agent, "cairn_journal", fmt.Sprintf("row seq %d", next),
				fmt.Sprintf("missing, row seq %d follows row seq %d", seq, next-1))
		}
		if sumMismatch(crc, recordSum(typ, payload)) {
			return nil, 0, 0, corruptRow(agent, "cairn_journal", fmt.Sprintf("row seq %d", seq), badSum)
		}
		if err := replayRow(r, agent, seq, checkpoint.RecordType(typ), payload); err != nil {
			return nil, 0, 0, err
		}
		next, size = seq+1, size+int64(len(payload))
	}
	if err := rows.Err(); err != nil {
		return nil, 0, 0, err
	}
	if next < durable {
		return nil, 0, 0, &lostRowsError{Agent: agent, End: next, Durable: durable, Round: r.State().Round}
	}
	rec := r.Recovered()
	rec.JournalBytes, rec.SnapshotBytes = size, int64(len(snap))
	return rec, next, base, nil
}

// firstSeq is the column, of a query of an agent's row of cairn_agents,
// that gives the sequence number of its first journal row (NULL when it
// has none), for baseDamage.
const firstSeq = `(SELECT min(seq) FROM cairn_journal WHERE agent = $1)`

// baseDamage refuses an agent whose base (the first sequence number after
// its snapshot) was raised by damage: a read from there would skip the
// rows below it without a word, as the snapshot's checksum does not cover
// base. A compaction writes the snapshot, its base and its durable mark,
// and deletes the rows below base, in one transaction: so no row lies
// below base, and base is not past durable once a durable write has set
// it (an agent of schema version 5 or older has durable 0 until then).
func baseDamage(agent string, base, durable int64, first *int64) *CorruptRowError {
	switch {
	case first != nil && *first < base:
		return corruptRow(agent, "cairn_agents", "base", fmt.Sprintf(
			"%d, past row seq %d of cairn_journal, which the snapshot does not hold "+
				"(a compaction deletes the rows its snapshot holds)", base, *first))
	case durable > 0 && base > durable:
		return corruptRow(agent, "cairn_agents", "base", fmt.Sprintf(
			"%d, past durable (%d), where a compaction makes them equal and the rows since raise durable only", base, durable))
	}
	return nil
}

// replayRow decodes and applies one journal row; a row that does not
// decode is a *CorruptRowError, reported by its sequence number.
func replayRow(r *checkpoint.Replay, agent string, seq int64, t checkpoint.RecordType, payload []byte) error {
	rec, err := checkpoint.DecodeRecord(t, payload)
	if err == nil {
		err = r.Add(rec)
	}
	if err != nil {
		return corruptRow(agent, "cairn_journal", fmt.Sprintf("row seq %d", seq), err.Error())
	}
	return nil
}

// Remove deletes an agent's snapshot and journal, keeping its lease, its
// event history and its bookmarks. The caller holds its lease.
func (s *Store) Remove(agent string) error {
	l, err := s.held(agent)
	if err != nil {
		return err
	}
	b := s.fence(l, &pgx.Batch{})
	b.Queue(`DELETE FROM cairn_journal WHERE agent = $1`, agent)
	b.Queue(`DELETE FROM cairn_past WHERE agent = $1`, agent)
	b.Queue(`DELETE FROM cairn_agents WHERE id = $1`, agent)
	if _, err := s.send(l, b); err != nil {
		return fmt.Errorf("remove agent %q: %w", agent, err)
	}
	return nil
}

// Summary summarises one agent; Locked says a process runs it, by the
// rule that refuses a take (leaseRow.running). When its lease cannot be
// read, Err says that whether a process runs it could not be told, and
// Locked is false: it is neither running nor interrupted as far as
// anyone knows.
func (s *Store) Summary(agent string) (checkpoint.Summary, error) {
	rec, err := s.Read(agent)
	if errors.Is(err, checkpoint.ErrNotFound) || errors.Is(err, checkpoint.ErrInvalidID) {
		return checkpoint.Summary{}, err
	}
	live, lerr := s.leaseLive(agent)
	if err == nil && lerr != nil {
		err = lerr
	}
	return checkpoint.NewSummary(agent, live, rec, err), nil
}

// leaseLive reports whether a process runs the agent; false when its
// lease has expired, or was released, or never was; an error when the
// lease cannot be read, saying that it could not tell.
func (s *Store) leaseLive(agent string) (bool, error) {
	ctx, cancel := s.opContext()
	defer cancel()
	var r leaseRow
	err := r.scan(s.pool.QueryRow(ctx, `SELECT `+leaseCols+` FROM cairn_leases WHERE agent = $1`, agent))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("could not tell whether a process runs agent %q, its lease unreadable (try again once the database answers): %w", agent, wrapConn(err))
	}
	return r.running(), nil
}

// fence queues, before a batch's writes of the lease's agent, the
// statement that fails the whole batch unless the lease is still held at
// its epoch and the schema is not newer than this build's, and renews the
// lease: a node that opened the store before another migrated it is
// refused its next write, in the same round trip.
func (s *Store) fence(l *lease, b *pgx.Batch) *pgx.Batch {
	b.Queue(fenceSQL, l.agent, l.epoch, s.ttl.Milliseconds(), s.version)
	return b
}

// fenceSQL is the fence of an agent's lease ($1) at its epoch ($2), which
// renews it for $3 ms, in a build that writes schema version $4 (see
// migrations/0008_fence_version.sql).
const fenceSQL = `SELECT cairn_fence($1, $2, $3, $4)`

// send runs a batch as one transaction, in one round trip, and returns the
// rows each statement affected. A batch that was certainly not run (the
// server could not be reached, or its connection had gone, as in a
// restart of the database) is sent again on a new connection, with a
// growing pause between tries, until the store's timeout: a restart
// pauses the writer rather than failing it. A fenced batch is a
// *FencedError; one the database did not answer, ErrUnavailable.
func (s *Store) send(l *lease, b *pgx.Batch) ([]int64, error) {
	return s.sendRule(l, b, notRun)
}

// sendRule is send of a batch that the rule again allows to be sent again.
func (s *Store) sendRule(l *lease, b *pgx.Batch, again retryRule) ([]int64, error) {
	tags, err := s.sendRetry(b, again)
	if isFence(err) {
		return nil, s.fenced(l.agent, l.epoch)
	}
	if fe := futureSchema(err, s.version); fe != nil {
		return nil, fe
	}
	err = wrapConn(err)
	var re *rowLockedError
	if errors.As(err, &re) {
		re.Row = fmt.Sprintf("a row of agent %q (its lease in cairn_leases, or its state)", l.agent)
	}
	return tags, err
}

func (s *Store) sendOnce(b *pgx.Batch) ([]int64, error) {
	ctx, cancel := s.opContext()
	defer cancel()
	tags := make([]int64, 0, b.Len())
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	for range b.Len() {
		tag, err := br.Exec()
		if err != nil {
			return nil, err
		}
		tags = append(tags, tag.RowsAffected())
	}
	return tags, br.Close()
}

// requeue copies a batch's statements into a new batch: a batch once sent
// holds its first connection's prepared statements.
func requeue(b *pgx.Batch) *pgx.Batch {
	nb := &pgx.Batch{}
	for _, q := range b.QueuedQueries {
		nb.Queue(q.SQL, q.Arguments...)
	}
	return nb
}

// Identity names the database and namespace this Store keeps agents in,
// without the password: the same for every Store opened on them, from any
// process, and different for another database, server or namespace.
func (s *Store) Identity() string {
	c := s.pool.Config().ConnConfig
	return fmt.Sprintf("postgres %s@%s:%d/%s %s", c.User, c.Host, c.Port, c.Database, s.schema)
}
