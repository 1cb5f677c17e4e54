package host

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairnrun/cairn/checkpoint"
)

// incarnationFile names, in this node's directories of an agent of a
// store that keeps them outside the store (PostgreSQL: the one of its
// kept changes, keptDirOf, and the one of its staging), the
// agent whose runs left what the directory holds: the id of its first
// run. Such an agent may be removed and made again on another node, with
// the same id and the same paths here: what this node kept of the old
// one (its kept changes, marks of delegations begun, staging) is then not
// the new one's, and is dropped once the new one runs here, or undo takes
// the lock here; a diff reads none of it. A file store keeps these in the
// agent's directory, removed with it, and needs no such file.
const incarnationFile = "agent"

// incarnation is the id of the first run of the agent st is, or runID,
// the run about to start, for one that has not run.
func incarnation(st *checkpoint.State, runID string) string {
	if len(st.Runs) > 0 {
		return st.Runs[0].ID
	}
	return runID
}

// keptForAnother says whether what this node keeps of agent is of
// another agent of its id, one removed since, than st's. False where
// the node cannot tell: a file store, a store in memory, a directory
// that names no agent (left by an older cairn).
func (e *Engine) keptForAnother(agent string, st *checkpoint.State) bool {
	if _, dir := e.store.(interface{ Dir() string }); dir || !leftoversOwn(e.store) || len(st.Runs) == 0 {
		return false
	}
	for _, dir := range e.leftoverDirs(agent) {
		if b, err := os.ReadFile(filepath.Join(dir, incarnationFile)); err == nil {
			return string(b) != st.Runs[0].ID
		}
	}
	return false
}

// leftoverDirs are this node's directories of agent that keep what its
// runs leave beside the store: the one of its kept changes (keptDirOf),
// first, and the one of its staging, when another. Each names the agent
// it keeps for in its incarnationFile.
func (e *Engine) leftoverDirs(agent string) []string {
	kept, temp := keptDirOf(e.store, agent), filepath.Dir(e.stagingRoot(agent))
	if kept == temp {
		return []string{kept}
	}
	return []string{kept, temp}
}

// claimLeftovers makes this node's directory of agent the one of st's
// agent, whose run runID is about to start: what another agent of its id
// left there is dropped first. The caller holds the agent's lock.
func (e *Engine) claimLeftovers(agent string, st *checkpoint.State, runID string) error {
	if _, dir := e.store.(interface{ Dir() string }); dir || !leftoversOwn(e.store) {
		return nil
	}
	want, dirs := incarnation(st, runID), e.leftoverDirs(agent)
	var write []string
	for _, dir := range dirs {
		name := filepath.Join(dir, incarnationFile)
		if b, err := os.ReadFile(name); err == nil && string(b) == want {
			continue
		} else if err == nil {
			if err := e.dropLeftovers(agent); err != nil {
				return err
			}
		}
		write = append(write, name)
	}
	for _, name := range write {
		// The directories made are synced in their parents: the kept
		// changes made in them later must outlast a power cut.
		made, err := makeDirs(filepath.Dir(name), "")
		if err != nil {
			return fmt.Errorf("agent %q: %w", agent, err)
		}
		if err := os.WriteFile(name, []byte(want), 0o600); err != nil {
			return fmt.Errorf("agent %q: %w", agent, err)
		}
		if err := syncDirs(made...); err != nil {
			return fmt.Errorf("agent %q: %w", agent, err)
		}
	}
	return nil
}
