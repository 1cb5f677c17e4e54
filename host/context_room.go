package host

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnrun/cairn/host/model"
)

// A context budget must leave room for a conversation: half of it holds
// what every request sends, the system prompt and the tools' descriptions,
// with the summary and the note a cut puts at the head (see newWindow). A
// budget that cannot is refused as soon as what it must hold is known:
//
//   - when the agent file is read (Validate), against its system prompt and
//     the tools known from the file alone: those of the modules built into
//     cairn, as `only:` picks them, and those cairn carries out for it;
//   - when a run makes an agent, before anything of it is stored
//     (checkRoom), against its modules' tools too, read from their
//     manifests;
//   - when a run binds its tools (newRun), against every tool it offers,
//     an MCP server's included, known only once the server is connected.
//
// Each check counts a part of the next one's tools, so none refuses a file
// a later one would take.

// roomFor checks that the budget leaves room for a conversation beside
// the system prompt and tools.
//
// # Errors
//
// ErrContextBudget, saying what they take and the least budget that holds
// them.
func (c ContextSpec) roomFor(system string, tools []model.Tool) error {
	if c.Budget == 0 {
		return nil
	}
	fixed := model.EstimateRequest(model.Request{System: system, Tools: tools})
	if fixed+c.summaryCap()+noteReserve <= c.Budget/2 {
		return nil
	}
	descriptions := fmt.Sprintf("the %d tools' descriptions", len(tools))
	if len(tools) == 1 {
		descriptions = "the tool's description"
	}
	return fmt.Errorf("%w: budget %d cannot hold a conversation: the system prompt and %s alone take about %d tokens, "+
		"and half the budget must hold them with a summary and a note; set context.budget to %d or more (more leaves the conversation room)",
		ErrContextBudget, c.Budget, descriptions, fixed, leastBudget(fixed))
}

// roomFor is ContextSpec.roomFor of the agent file's budget, system prompt
// and tools, its error naming the file and the line of the budget.
func (af *AgentFile) roomFor(tools []model.Tool) error {
	err := af.Context.roomFor(af.System, tools)
	if err == nil {
		return nil
	}
	return af.inFile(err, "context", "budget")
}

// leastBudget is the smallest budget whose half holds fixed tokens, a
// summary and a note.
func leastBudget(fixed int) int {
	b := max(minContextBudget, (fixed+noteReserve)*5/2)
	for fixed+(ContextSpec{Budget: b}).summaryCap()+noteReserve > b/2 {
		b++
	}
	return b
}

// checkRoom refuses, before a run stores anything of a new agent, a
// budget that the system prompt and the tools of the agent's modules and
// of cairn leave no room in. An MCP server's tools are not known yet:
// newRun checks again with them.
//
// # Errors
//
// ErrContextBudget; what keeps cairn's own tools from being offered (a
// sub-agent refused, ErrSubAgent), as the run's start would return it.
func checkRoom(af *AgentFile, mods []toolModule) error {
	if af.Context.Budget == 0 {
		return nil
	}
	var tools []model.Tool
	for _, m := range mods {
		tools = append(tools, offered(m)...)
	}
	for _, kind := range natives {
		nts, err := kind(af)
		if err != nil {
			return err
		}
		for _, nt := range nts {
			tools = append(tools, nt.Spec())
		}
	}
	return af.roomFor(tools)
}

// fileTools are the tools of an agent file known without reading any
// other file: those of the modules built into cairn, as `only:` picks
// them, and those cairn carries out for it, the delegate tool described
// from the sub-agents' names and descriptions. A run offers these and
// more.
func (af *AgentFile) fileTools() []model.Tool {
	var tools []model.Tool
	for _, ref := range af.Tools {
		wasm, ok := embeddedWasm(ref.Module)
		if !ok {
			continue
		}
		if m, err := moduleOf(ref, wasm); err == nil {
			tools = append(tools, offered(m)...)
		}
	}
	var nts []nativeTool
	if len(af.Agents) > 0 {
		d := &delegateTool{}
		for _, s := range af.Agents {
			d.subs = append(d.subs, &subAgent{SubAgent: s})
		}
		nts = append(nts, d)
	}
	todo, _ := todoTools(af)
	memory, _ := memoryTools(af)
	for _, nt := range append(append(nts, todo...), memory...) {
		tools = append(tools, nt.Spec())
	}
	// A tool named twice is refused when the run starts; count it once.
	slices.SortStableFunc(tools, func(a, b model.Tool) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(tools, func(a, b model.Tool) bool { return a.Name == b.Name })
}

// offered are the tools of a module the model is offered, as toolset.add
// describes them: the manifest's, as `only:` picks them.
func offered(m toolModule) []model.Tool {
	var out []model.Tool
	for _, t := range m.Manifest.Tools {
		if len(m.Ref.Only) > 0 && !slices.Contains(m.Ref.Only, t.Name) {
			continue
		}
		out = append(out, model.Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(schemaText(t.InputSchema))})
	}
	return out
}
