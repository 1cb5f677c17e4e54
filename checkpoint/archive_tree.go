package checkpoint

import (
	"fmt"
	"sort"
)

// maxArchiveDepth bounds how deep a tree of sub-agents an export holds and
// an import reads: deeper than any delegation cairn makes (8, package host),
// shallow enough that a hostile file cannot recurse without end.
const maxArchiveDepth = 16

// exportTree exports agent and, depth first, every sub-agent whose
// lineage names it as parent.
func exportTree(s Store, agent string, depth int) (*Archive, error) {
	if depth > maxArchiveDepth {
		return nil, fmt.Errorf("export agent %q: sub-agents nested deeper than %d", agent, maxArchiveDepth)
	}
	a, err := exportOne(s, agent)
	if err != nil {
		return nil, err
	}
	kids, err := childrenOf(s, agent)
	if err != nil {
		return nil, fmt.Errorf("export agent %q: %w", agent, err)
	}
	for _, id := range kids {
		c, err := exportTree(s, id, depth+1)
		if err != nil {
			return nil, err
		}
		a.Children = append(a.Children, c)
	}
	a.Version = archiveVersionOf(a)
	return a, nil
}

// childrenOf lists, sorted, the agents of s whose parent is agent.
func childrenOf(s Store, agent string) ([]string, error) {
	list, err := s.List()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, sum := range list {
		if sum.Parent == agent {
			out = append(out, sum.ID)
		}
	}
	sort.Strings(out)
	return out, nil
}

// checkChildren refuses sub-agents that are not whole archives of their
// own, that do not name a as their parent, that repeat an id, or that nest
// too deep.
func (a *Archive) checkChildren() error {
	seen := map[string]bool{}
	return a.checkTree(0, seen)
}

func (a *Archive) checkTree(depth int, seen map[string]bool) error {
	if seen[a.Agent] {
		return archiveCorrupt("export of agent "+a.Agent, "the agent is in the tree twice")
	}
	seen[a.Agent] = true
	for _, c := range a.Children {
		if c == nil || depth+1 > maxArchiveDepth {
			return archiveCorrupt("export of agent "+a.Agent, "a sub-agent is empty or nested too deep")
		}
		if c.State == nil || c.State.Parent == nil || c.State.Parent.Agent != a.Agent {
			return archiveCorrupt("export of agent "+a.Agent, fmt.Sprintf("sub-agent %q does not name it as parent", c.Agent))
		}
		if err := c.checkOne(); err != nil {
			return err
		}
		if err := c.checkTree(depth+1, seen); err != nil {
			return err
		}
	}
	return nil
}

// existing names the first agent of the tree that s already has, or "".
func (a *Archive) existing(s Store) string {
	if s.Exists(a.Agent) {
		return a.Agent
	}
	for _, c := range a.Children {
		if id := c.existing(s); id != "" {
			return id
		}
	}
	return ""
}

// importChildren imports a's sub-agents, parents before their children,
// so that a resume of the tree finds every parent.
func importChildren(s Store, a *Archive, made *[]string) error {
	for _, c := range a.Children {
		if err := importOne(s, c, made); err != nil {
			return err
		}
		if err := importChildren(s, c, made); err != nil {
			return err
		}
	}
	return nil
}

// Agents counts the agents the archive holds: its own and its sub-agents'.
func (a *Archive) Agents() int {
	n := 1
	for _, c := range a.Children {
		n += c.Agents()
	}
	return n
}
