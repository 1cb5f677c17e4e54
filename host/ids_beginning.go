package host

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/cairnrun/cairn/checkpoint"
)

// PrefixError is the error of an id that no agent has but that begins the
// ids of sub-agents: a sub-agent's id is its parent's, its name and a
// digest (lead.mid-2317e554, see childID), and one typed without its
// digest (lead.mid) names no agent. It wraps the error that found none
// (checkpoint.ErrNotFound).
type PrefixError struct {
	ID     string   // the id asked for
	Agents []string // the ids it begins, in the store's order
	Err    error    // that no agent has ID
}

// maxNamed is how many of the agents an id begins a PrefixError names.
const maxNamed = 5

func (e *PrefixError) Error() string {
	ids := e.Agents
	if len(ids) > maxNamed {
		ids = append(ids[:maxNamed:maxNamed], fmt.Sprintf("and %d more", len(e.Agents)-maxNamed))
	}
	return fmt.Sprintf("%v; agents whose ids begin with it: %s", e.Err, strings.Join(ids, ", "))
}

func (e *PrefixError) Unwrap() error { return e.Err }

// AgentsBeginning is err, that no agent has the id, as a *PrefixError
// naming the agents whose ids id begins (an id cut at a '.' or in a
// digest: lead, lead.mid, lead.mid-23; not lead.mi). An error that is not
// checkpoint.ErrNotFound, one of an agent that is there (a round, run or
// bookmark it lacks), or of an id that begins none, is returned as it is,
// and so is err if the store cannot list its agents.
func AgentsBeginning(store checkpoint.Store, id string, err error) error {
	if !errors.Is(err, checkpoint.ErrNotFound) || id == "" || store == nil || store.Exists(id) {
		return err
	}
	all, lerr := store.List()
	if lerr != nil {
		return err
	}
	var ids []string
	for _, a := range all {
		if beginsID(a.ID, id) {
			ids = append(ids, a.ID)
		}
	}
	if len(ids) == 0 {
		return err
	}
	return &PrefixError{ID: id, Agents: ids, Err: err}
}

// beginsID reports whether prefix is the evident start of the agent id: it
// ends at a '.' where a sub-agent's id goes on from its parent's ("lead" or
// "lead." of "lead.mid-2317e554"), or in a sub-agent's digest, at its '-'
// or after ("lead.mid", "lead.mid-23"). One that ends in a name ("lead.mi")
// is not.
func beginsID(id, prefix string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || rest == "" {
		return false
	}
	if rest[0] == '.' || strings.HasSuffix(prefix, ".") {
		return true
	}
	start := strings.LastIndexByte(prefix, '.') + 1 // the part of id prefix ends in
	part, _, _ := strings.Cut(id[start:], ".")
	const digest = len("-2317e554")
	if start == 0 || len(part) <= digest || part[len(part)-digest] != '-' || len(prefix)-start < len(part)-digest {
		return false
	}
	_, herr := hex.DecodeString(part[len(part)-digest+1:])
	return herr == nil
}
