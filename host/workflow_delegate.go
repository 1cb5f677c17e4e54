package host

import (
	"fmt"
	"strings"
)

// SubAgentFile is the agent file of the sub-agent that af declares under
// name in its `agents:`, read and checked to narrow af's tools and grants
// as a delegation checks it. A workflow's delegation step runs it as an
// agent of its own, whose stored definition keeps af (and any agent file
// above af), so that every resume binds it by their approval rules.
//
// # Errors
//
// ErrSubAgent for a name af does not declare (the error lists those it
// does), a definition that does not read, or one that asks for more than af.
func (af *AgentFile) SubAgentFile(name string) (*AgentFile, error) {
	var names []string
	for _, s := range af.Agents {
		if s.Name == name {
			sub, err := s.resolve(af)
			if err != nil {
				return nil, err
			}
			return sub.af, nil
		}
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("%w: %s declares no sub-agent %q under agents: (it declares: %s)",
		ErrSubAgent, af.describe(), name, strings.Join(names, ", "))
}
