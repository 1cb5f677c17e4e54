package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

// ErrKeepRounds: Collect was asked to keep only an agent's last rounds
// (checkpoint.Retention.Rounds), which a PostgreSQL store does not do.
var ErrKeepRounds = errors.New("collect: keeping only the last rounds of agents' events and pasts (--keep-rounds) works on a file store only; " +
	"a PostgreSQL store keeps them all")

// Collect removes what keep does not keep: each agent's bookmarks past
// keep.Bookmarks, and blobs that no agent or kept bookmark names and that
// were last stored longer ago than keep.BlobGrace. Compaction already
// deletes old journal records as it goes, so keep.Snapshots has nothing to
// do here. An agent's bookmarks are trimmed under its lease, taken only
// when there is one to remove; one that a process runs is skipped and
// named in Skipped, its blobs kept. Collected.Files names
// what was removed as "bookmark AGENT/LABEL" and "blob DIGEST".
//
// # Errors
//
// As the file store's Collect: an agent whose state, pasts or bookmarks
// cannot be read — a newer schema, a damaged row, lost rows — is not
// touched at all and is named in Unreadable, with why; the other agents
// are collected, and no blob is removed (BlobsKept says why), since any
// blob may be one the agent refers to. Collect fails when the database
// cannot be reached or its list of agents read, and, before it removes
// anything, when keep.Rounds asks to trim old rounds' events and pasts,
// which this store keeps in rows it does not trim (ErrKeepRounds).
func (s *Store) Collect(keep checkpoint.Retention) (*checkpoint.Collected, error) {
	if keep.Rounds > 0 {
		return nil, ErrKeepRounds
	}
	ids, err := s.collectIDs()
	if err != nil {
		return nil, fmt.Errorf("collect: %w", err)
	}
	c := &checkpoint.Collected{}
	inUse := map[string]bool{}
	for _, id := range ids {
		err := s.collectAgent(id, keep, c, inUse)
		if errors.Is(err, ErrUnavailable) {
			return c, fmt.Errorf("collect agent %q: %w", id, err)
		}
		if err != nil {
			c.Leave(id, err)
		}
	}
	if c.KeepBlobs() {
		return c, nil
	}
	if err := s.collectBlobs(keep, c, inUse); err != nil {
		return c, fmt.Errorf("collect blobs: %w", err)
	}
	return c, nil
}

// collectIDs lists the agents with state or bookmarks.
func (s *Store) collectIDs() ([]string, error) {
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id FROM cairn_agents UNION SELECT agent FROM cairn_bookmarks ORDER BY 1`)
	if err != nil {
		return nil, wrapConn(err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// collectAgent trims the agent's bookmarks and marks what it names. Its
// state, pasts and bookmarks are read before anything of it is removed,
// so that one that cannot be read is left as it was. One that a process
// runs is skipped, its blobs marked all the same.
func (s *Store) collectAgent(id string, keep checkpoint.Retention, c *checkpoint.Collected, inUse map[string]bool) error {
	rec, err := s.Read(id)
	switch {
	case err == nil:
		checkpoint.MarkState(rec.State, rec.Tail, inUse)
		if keep.MarkTail != nil {
			keep.MarkTail(rec.Tail, inUse)
		}
	case !errors.Is(err, checkpoint.ErrNotFound):
		return err
	}
	if err := checkpoint.MarkPasts(s, id, inUse); err != nil {
		return err
	}
	trimmed := map[string]bool{}
	live, err := s.leaseLive(id)
	if err != nil {
		return err
	}
	if live {
		c.Skipped = append(c.Skipped, id)
	} else if trimmed, err = s.trimBookmarks(id, keep, c); err != nil {
		return err
	}
	return s.markBookmarks(id, trimmed, inUse)
}

// trimBookmarks removes the agent's oldest bookmarks past the limit and
// returns their labels. It takes the agent's lease only to remove one: a
// dry run, or an agent with nothing to remove, leaves the lease (and its
// epoch) as it was, as any command that only reads does.
func (s *Store) trimBookmarks(id string, keep checkpoint.Retention, c *checkpoint.Collected) (map[string]bool, error) {
	trimmed := map[string]bool{}
	marks, err := s.bookmarks(id)
	if err != nil || keep.Bookmarks <= 0 || len(marks) <= keep.Bookmarks {
		return trimmed, err
	}
	if !keep.DryRun {
		lock, err := s.Lock(id, checkpoint.ThisProcess("gc"))
		if errors.Is(err, checkpoint.ErrLocked) {
			c.Skipped = append(c.Skipped, id)
			return trimmed, nil
		}
		if err != nil {
			return nil, err
		}
		defer lock.Unlock()
		if marks, err = s.bookmarks(id); err != nil || len(marks) <= keep.Bookmarks {
			return trimmed, err
		}
	}
	for _, b := range marks[:len(marks)-keep.Bookmarks] {
		if !keep.DryRun {
			if _, err := s.exec(idempotent, `DELETE FROM cairn_bookmarks WHERE agent = $1 AND label = $2`, id, b.Label); err != nil {
				return nil, err
			}
		}
		trimmed[b.Label] = true
		c.Files = append(c.Files, "bookmark "+id+"/"+b.Label)
	}
	return trimmed, nil
}

// markBookmarks marks the blobs the agent's kept bookmarks name.
func (s *Store) markBookmarks(id string, trimmed, inUse map[string]bool) error {
	marks, err := s.bookmarks(id)
	if err != nil {
		return err
	}
	for _, b := range marks {
		if !trimmed[b.Label] {
			checkpoint.MarkState(b.State, nil, inUse)
			inUse[b.Workspace] = true
		}
	}
	return nil
}

// collectBlobs removes the blobs not in use and older than the grace. The
// age is checked again by the DELETE itself, so a blob stored again
// meanwhile stays; since its count says whether the blob was removed, a
// DELETE is sent again only if certainly not run.
func (s *Store) collectBlobs(keep checkpoint.Retention, c *checkpoint.Collected, inUse map[string]bool) error {
	grace := keep.BlobGrace
	if grace <= 0 {
		grace = checkpoint.DefaultBlobGrace
	}
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT digest, length(data) FROM cairn_blobs
		WHERE stored < now() - $1 * interval '1 millisecond' ORDER BY digest`, grace.Milliseconds())
	if err != nil {
		return wrapConn(err)
	}
	type blob struct {
		Digest string
		Size   int64
	}
	old, err := pgx.CollectRows(rows, pgx.RowToStructByPos[blob])
	if err != nil {
		return wrapConn(err)
	}
	for _, b := range old {
		if inUse[b.Digest] {
			continue
		}
		if !keep.DryRun {
			n, err := s.exec(notRun, `DELETE FROM cairn_blobs WHERE digest = $1
				AND stored < now() - $2 * interval '1 millisecond'`, b.Digest, grace.Milliseconds())
			if err != nil {
				return err
			}
			if n == 0 {
				continue
			}
		}
		c.Files = append(c.Files, "blob "+b.Digest)
		c.Bytes += b.Size
	}
	return nil
}
