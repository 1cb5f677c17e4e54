package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Retention says what Collect keeps. Its zero value keeps the newest
// snapshot and its journal, every bookmark, and blobs that are in use or
// younger than DefaultBlobGrace.
type Retention struct {
	// Snapshots is how many of an agent's newest snapshots (each with the
	// journal that follows it) to keep; less than 1 means 1. The newest
	// boundary is never removed.
	Snapshots int
	// Bookmarks, when positive, keeps only that many newest bookmarks of
	// each agent.
	Bookmarks int
	// Rounds, when positive, keeps the event history and the pasts of
	// only the agent's last Rounds rounds (see rounds_trim.go); the
	// journal and snapshots, which hold every message, are not touched by
	// it. A PostgreSQL store trims its rows alike, in one transaction.
	Rounds int
	// BlobGrace protects blobs younger than it: an agent being created
	// stores its blobs before its first state. Zero means DefaultBlobGrace.
	BlobGrace time.Duration
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
	// MarkTail, when set, marks in inUse what the records of an agent's
	// interrupted round name that MarkState does not know how to read: the
	// files its calls' changes write, which the store keeps so that another
	// node can apply them (host.Collect sets it).
	MarkTail func(tail []Record, inUse map[string]bool)
}

// DefaultBlobGrace is how old an unreferenced blob must be to be removed.
const DefaultBlobGrace = time.Hour

// Collected is what Collect removed (or, in a dry run, would remove).
type Collected struct {
	Files []string `json:"files"` // paths relative to the store
	Bytes int64    `json:"bytes"`
	// Trimmed are the files whose oldest rounds Retention.Rounds removed:
	// each is rewritten whole, without them. Bytes counts what they lost.
	Trimmed []Trimmed `json:"trimmed,omitempty"`
	Skipped []string  `json:"skipped,omitempty"` // agents left alone because a process runs them
	// Untrimmed are agents whose old rounds Retention.Rounds could not
	// trim, and why (a disk too full for the rounds kept to be written
	// beside the file): each of their files is as it was or trimmed,
	// whole, and the rest of them was collected.
	Untrimmed []Unreadable `json:"untrimmed,omitempty"`
	// Unreadable are agents left alone, every file as it was, because
	// they could not be locked or read: from a newer cairn, corrupt,
	// missing committed data, or files cairn may not open.
	Unreadable []Unreadable `json:"unreadable,omitempty"`
	// BlobsKept says why no blob was removed, when one agent's blobs
	// could not be known.
	BlobsKept string `json:"blobs_kept,omitempty"`
	// Fills are the directories outside the store, absolute, that a fork
	// or resume killed while it filled a workspace left beside it
	// (.cairn-fill-AGENT-NAME-RANDOM), removed (host.Collect sets it).
	Fills []string `json:"fills,omitempty"`
	// Made are the directories outside the store, absolute, that a fork
	// or resume --workspace killed before it filled a workspace made for
	// it and left empty, removed (host.Collect sets it): the workspace,
	// and those above it that it made.
	Made []string `json:"made,omitempty"`
	// Unmade are the workspaces, outside the store, of forks killed once
	// they had filled them, before they were done (host.Collect sets it):
	// each is left as it is, for the same fork run again to finish, or a
	// person to remove.
	Unmade []UnmadeFork `json:"unmade,omitempty"`
	// Unremoved are the directories outside the store, of Fills and
	// Made, that Collect found to remove and could not (its file system
	// read-only, say), and why (host.Collect sets it): each is left, with
	// what names it, for the next gc to try again.
	Unremoved []Unremoved `json:"unremoved,omitempty"`
	// Kept are this node's directories, outside the store, of what it
	// keeps beside a store that does not keep it (a PostgreSQL store's
	// kept changes, for diff and undo, and staging), that Collect removed
	// or moved (host.Collect sets it), each under its agent's lock: those
	// of an agent the store no longer has (removed on another node, or by
	// hand) are removed, and the kept changes an older cairn kept in the
	// temp directory are moved to the state directory. One it could not
	// remove or move is in Unremoved.
	Kept []KeptDir `json:"kept,omitempty"`
}

// KeptDir is a directory of this node that kept what agent Agent left
// beside the store: removed, or, with MovedTo, moved there. Gone says
// the store no longer has the agent it kept for; a removed one that is
// not gone held an older copy of kept changes the state directory holds.
type KeptDir struct {
	Agent   string `json:"agent"`
	Dir     string `json:"dir"`
	MovedTo string `json:"moved_to,omitempty"`
	Gone    bool   `json:"gone,omitempty"`
}

// Unremoved is a directory Collect could not remove, and why.
type Unremoved struct {
	Dir    string `json:"dir"`
	Reason string `json:"reason"`
}

// UnmadeFork is the workspace Dir of a fork of agent From at Round as
// Agent, killed before it was done; Label is the bookmark it forked, if
// one was named, and Past says it forked a past round (--at-round).
type UnmadeFork struct {
	Dir   string `json:"dir"`
	Agent string `json:"agent"`
	From  string `json:"from"`
	Round int    `json:"round"`
	Label string `json:"label,omitempty"`
	Past  bool   `json:"past,omitempty"`
}

// Trimmed is a file of an agent that Retention.Rounds cut: the rounds
// before Round were removed from it, Bytes fewer bytes.
type Trimmed struct {
	Path  string `json:"path"` // relative to the store
	Round int    `json:"round"`
	Bytes int64  `json:"bytes"`
}

// Unreadable is an agent Collect left alone, and why.
type Unreadable struct {
	Agent  string `json:"agent"`
	Reason string `json:"reason"`
}

// Leave records that the agent could not be locked or read, for why, and
// was left as it was. A Store's Collect calls it, then KeepBlobs.
func (c *Collected) Leave(agent string, why error) {
	c.Unreadable = append(c.Unreadable, Unreadable{Agent: agent, Reason: why.Error()})
}

// KeepBlobs reports whether no blob may be removed, because an agent was
// left unread and the blobs it refers to are unknown; BlobsKept then says
// so. Blobs are shared by content between agents, so any blob may be one
// of them.
func (c *Collected) KeepBlobs() bool {
	if len(c.Unreadable) == 0 {
		return false
	}
	c.BlobsKept = fmt.Sprintf("agent %s could not be read, so the blobs it refers to are unknown", c.Unreadable[0].Agent)
	return true
}

// Collect removes what Retention does not keep: old snapshots and
// journals, temp files crashes left, what calls staged for an agent that
// has nothing left to apply, bookmarks past the limit, and blobs no agent
// or bookmark refers to. Each agent is collected under its lock;
// one that a process runs is skipped and named in Skipped. A dry run
// takes no lock, and skips the agents whose lock a process holds.
//
// # Errors
//
// An agent that cannot be locked, or whose state, bookmarks or pasts (and
// the workspace manifests they name) cannot be read — a newer schema,
// corruption, lost data, a file it may not open — is not touched at all
// and is named in Unreadable, with why; the other agents are collected.
// Since the blobs such an agent refers to cannot be known, and blobs are
// shared by content between agents, any blob may be one of them: no blob
// is removed then, and BlobsKept says why. Collect fails only when the
// store's own directories cannot be read.
func (s *FileStore) Collect(keep Retention) (*Collected, error) {
	c := &Collected{}
	inUse := map[string]bool{}
	entries, err := os.ReadDir(filepath.Join(s.dir, "agents"))
	if err != nil {
		return nil, fmt.Errorf("collect: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() || CheckID(e.Name()) != nil {
			continue
		}
		if why := s.collectAgent(e.Name(), keep, c, inUse); why != nil {
			c.Leave(e.Name(), why)
		}
	}
	if c.KeepBlobs() {
		return c, nil
	}
	return c, s.collectBlobs(keep, c, inUse)
}

// collectAgent trims an agent and marks in inUse the blobs it refers to.
// It returns why the agent could not be locked or read, having removed
// nothing of it: what it refers to is known before anything is removed.
// A dry run takes no lock: it asks whether a process holds it (Locked),
// and says what a gc would do now, skipping the agent when one does.
func (s *FileStore) collectAgent(id string, keep Retention, c *Collected, inUse map[string]bool) error {
	held := false
	if keep.DryRun {
		var err error
		if held, err = s.Locked(id); err != nil {
			return err
		}
	} else {
		lock, err := s.Lock(id, ThisProcess("gc"))
		switch {
		case errors.Is(err, ErrLocked):
			held = true
		case err != nil:
			return err
		default:
			defer lock.Unlock()
		}
	}
	if held {
		// A process runs it: nothing of it is removed, and what it refers
		// to is kept (BlobGrace keeps what it stores meanwhile).
		c.Skipped = append(c.Skipped, id)
		return s.markAgent(id, nil, nil, keep, inUse)
	}
	doomed, trimmed, err := s.trimmable(id, keep)
	if err != nil {
		return err
	}
	plan, err := s.planRounds(id, keep.Rounds)
	if err != nil {
		return err
	}
	if err := s.markAgent(id, trimmed, plan, keep, inUse); err != nil {
		return err
	}
	if err := s.trimRounds(id, plan, keep.DryRun, c); err != nil {
		// Each file is old or new, whole: what the past file holds now
		// is kept, and the rest of the agent collected.
		c.Untrimmed = append(c.Untrimmed, Unreadable{Agent: id, Reason: err.Error()})
		if err := MarkPasts(s, id, inUse); err != nil {
			return fmt.Errorf("the workspaces of its past rounds: %w", err)
		}
	}
	for _, name := range doomed {
		s.remove(filepath.Join("agents", id, name), keep.DryRun, c)
	}
	return nil
}

// trimmable lists what of an agent Retention does not keep, relative to
// its directory: old snapshots, temp files, staging it has no use for and,
// past the limit, its oldest bookmarks, whose labels it returns. It fails
// if the agent's state or bookmarks cannot be read. An agent with no state
// is readable: there is nothing to misread.
func (s *FileStore) trimmable(id string, keep Retention) (doomed []string, trimmed map[string]bool, err error) {
	rec, err := s.Read(id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, nil, err
	}
	marks, err := s.Bookmarks(id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, nil, err
	}
	dir := filepath.Join(s.dir, "agents", id)
	snaps, _ := listRounds(dir, "snap-", ".cbor")
	if n := max(keep.Snapshots, 1); len(snaps) > n {
		for _, r := range snaps[:len(snaps)-n] {
			doomed = append(doomed, snapName(r), journalName(r))
		}
	}
	doomed = append(doomed, tempFiles(dir, "")...)
	if rec != nil && !rec.Interrupted() {
		// Nothing is left to apply: what calls staged is of no use.
		doomed = append(doomed, stagingDirs(dir)...)
	}
	doomed = append(doomed, tempFiles(filepath.Join(dir, "bookmarks"), "bookmarks")...)
	trimmed = map[string]bool{}
	if keep.Bookmarks > 0 && len(marks) > keep.Bookmarks {
		for _, b := range marks[:len(marks)-keep.Bookmarks] {
			doomed = append(doomed, filepath.Join("bookmarks", b.Label+".cbor"))
			trimmed[b.Label] = true
		}
	}
	return doomed, trimmed, nil
}

// markAgent marks the blobs an agent's state, its bookmarks but the ones
// trimmed, and its pasts name: the pasts plan keeps, where it trims them.
// It fails if any of them cannot be read.
func (s *FileStore) markAgent(id string, trimmed map[string]bool, plan *roundsPlan, keep Retention, inUse map[string]bool) error {
	if rec, err := s.Read(id); err == nil {
		MarkState(rec.State, rec.Tail, inUse)
		if keep.MarkTail != nil {
			keep.MarkTail(rec.Tail, inUse)
		}
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	marks, err := s.Bookmarks(id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	for _, b := range marks {
		if !trimmed[b.Label] {
			MarkState(b.State, nil, inUse)
			inUse[b.Workspace] = true
		}
	}
	if plan != nil && plan.past != nil {
		if err := plan.mark(s, inUse); err != nil {
			return fmt.Errorf("the workspaces of its past rounds: %w", err)
		}
	} else if err := MarkPasts(s, id, inUse); err != nil {
		return fmt.Errorf("the workspaces of its past rounds: %w", err)
	}
	return nil
}

func markDefinition(d Definition, inUse map[string]bool) {
	inUse[d.AgentFile], inUse[d.Script] = true, true
	for _, digest := range d.Modules {
		inUse[digest] = true
	}
	for _, a := range d.Above {
		inUse[a.File] = true
	}
}

// stagingDirs lists what calls staged under the agent's directory.
func stagingDirs(dir string) []string {
	entries, _ := os.ReadDir(filepath.Join(dir, "staging"))
	var out []string
	for _, e := range entries {
		out = append(out, filepath.Join("staging", e.Name()))
	}
	return out
}

// tempFiles lists what crashes of writeAtomic left in dir.
func tempFiles(dir, rel string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			out = append(out, filepath.Join(rel, e.Name()))
		}
	}
	return out
}

func (s *FileStore) collectBlobs(keep Retention, c *Collected, inUse map[string]bool) error {
	grace := keep.BlobGrace
	if grace <= 0 {
		grace = DefaultBlobGrace
	}
	dir := filepath.Join(s.dir, "blobs", "sha256")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("collect blobs: %w", err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || inUse["sha256:"+e.Name()] || time.Since(fi.ModTime()) < grace {
			continue
		}
		s.remove(filepath.Join("blobs", "sha256", e.Name()), keep.DryRun, c)
	}
	return nil
}

// remove removes one file of the store and counts it.
func (s *FileStore) remove(rel string, dryRun bool, c *Collected) {
	path := filepath.Join(s.dir, rel)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if !dryRun && os.RemoveAll(path) != nil {
		return
	}
	c.Files = append(c.Files, rel)
	if err == nil {
		c.Bytes += fi.Size()
	}
}
