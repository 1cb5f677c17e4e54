package pgstore

import (
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

// Collect removes what keep does not keep: each agent's bookmarks past
// keep.Bookmarks, the events and pasts of its rounds before its last
// keep.Rounds (rounds_trim.go), and blobs that no agent, kept past or
// kept bookmark names and that were last stored longer ago than
// keep.BlobGrace. Compaction already deletes old journal records as it
// goes, so keep.Snapshots has nothing to do here. An agent's bookmarks
// and rounds are trimmed under its lease, taken only when there is one to
// remove; one that a process runs is skipped and named in Skipped, its
// blobs kept. Collected.Files names what was removed as "bookmark
// AGENT/LABEL" and "blob DIGEST", Collected.Trimmed the rows trimmed as
// "cairn_past/AGENT" and "cairn_events/AGENT". An agent whose trim failed
// (the transaction, or its connection) is named in Untrimmed: its rows
// are as they were, and the rest of it was collected.
//
// # Errors
//
// As the file store's Collect: an agent whose state, pasts or bookmarks
// cannot be read — a newer schema, a damaged row, lost rows — is not
// touched at all and is named in Unreadable, with why; the other agents
// are collected, and no blob is removed (BlobsKept says why), since any
// blob may be one the agent refers to. Collect fails when the database
// cannot be reached or its list of agents read.
func (s *Store) Collect(keep checkpoint.Retention) (*checkpoint.Collected, error) {
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
	live, err := s.leaseLive(id)
	if err != nil {
		return err
	}
	var plan *roundsPlan
	if keep.Rounds > 0 && !live {
		if plan, err = s.planRounds(id, keep.Rounds); err != nil {
			return err
		}
	}
	if err := plan.mark(s, id, inUse); err != nil {
		return fmt.Errorf("the workspaces of its past rounds: %w", err)
	}
	trimmed := map[string]bool{}
	if live {
		c.Skipped = append(c.Skipped, id)
	} else if trimmed, err = s.trimBookmarks(id, keep, c); err != nil {
		return err
	}
	if plan != nil {
		if err := s.trimRounds(id, plan, keep, c, inUse); err != nil {
			return err
		}
	}
	return s.markBookmarks(id, trimmed, inUse)
}

// trimRounds trims the agent's events and pasts to its last keep.Rounds
// rounds under its lease, planned again under it, or, in a dry run,
// reports what plan, made without it, would trim. A trim that fails
// changes nothing (one transaction): the agent is named in Untrimmed,
// with why, and the pasts it keeps are marked. It fails only when they
// cannot be read.
func (s *Store) trimRounds(id string, plan *roundsPlan, keep checkpoint.Retention, c *checkpoint.Collected, inUse map[string]bool) error {
	if keep.DryRun {
		plan.report(id, c)
		return nil
	}
	lock, err := s.Lock(id, checkpoint.ThisProcess("gc"))
	if errors.Is(err, checkpoint.ErrLocked) {
		// A process took it since: its pasts stay, every one.
		if !slices.Contains(c.Skipped, id) {
			c.Skipped = append(c.Skipped, id)
		}
		return checkpoint.MarkPasts(s, id, inUse)
	}
	if err == nil {
		defer lock.Unlock()
		// The agent may have run since plan was made.
		if plan, err = s.planRounds(id, keep.Rounds); err == nil && plan != nil {
			if err = plan.mark(s, id, inUse); err == nil {
				err = plan.trim(s, lock.(*lease))
			}
			if err == nil {
				plan.report(id, c)
				return nil
			}
		}
	}
	if err != nil {
		c.Untrimmed = append(c.Untrimmed, checkpoint.Unreadable{Agent: id, Reason: err.Error()})
	}
	return checkpoint.MarkPasts(s, id, inUse)
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
// DELETE is sent again only if certainly not run. Each blob counts the
// bytes its removal frees: a whole one its size, an unfinished one (its
// chunked write cut off) the chunks it has, not the size its row
// declares. A chunk stored after they are counted makes the blob fresh
// (putChunks), so the DELETE leaves it.
func (s *Store) collectBlobs(keep checkpoint.Retention, c *checkpoint.Collected, inUse map[string]bool) error {
	grace := keep.BlobGrace
	if grace <= 0 {
		grace = checkpoint.DefaultBlobGrace
	}
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT digest, CASE WHEN whole THEN coalesce(size, length(data))
			ELSE length(data) + coalesce((SELECT sum(length(c.data)) FROM cairn_blob_chunks c WHERE c.digest = b.digest), 0)::bigint END
		FROM cairn_blobs b
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
