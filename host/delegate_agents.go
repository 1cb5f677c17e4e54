package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cairnrun/cairn/checkpoint"
)

// SubAgent is one entry of an agent file's `agents:` list: a sub-agent the
// model may hand a task to with the delegate tool. It names an agent file,
// or defines one inline with the keys of an agent file (model, system,
// tools, sandbox, limits, approvals, todos and its own agents):
//
//	agents:
//	  - name: reviewer
//	    description: reads the draft and lists what is wrong with it
//	    file: reviewer.yaml
//	  - name: writer
//	    description: writes one section of the report
//	    model: {provider: script, script: writer-script.yaml}
//	    system: You write one section, nothing else.
//	    tools: [{module: builtin, only: [read_file, write_file]}]
//	    limits: {max_rounds: 8}
//
// A sub-agent's tools, grants and limits can only narrow its parent's:
// each of its tool modules must be one of the parent's, with no tool the
// parent's `only:` leaves out, no grant (network included) the parent's
// lacks and no sandbox limit above the parent's, and each of its MCP
// servers one of the parent's, its entry narrowing the parent's entry. A
// run whose sub-agents ask for more does not start; the error names the
// line to change; a sub-agent's own file read again by a resume with
// Upgrade is checked the same way (see readmit). The parent's approval
// rules bind the sub-agent's calls too (see run.judge). Relative paths of
// an inline definition are relative to the parent's agent file.
type SubAgent struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description,omitempty"`
	// File is the sub-agent's agent file; without it the entry defines
	// the sub-agent inline.
	File string `yaml:"file" json:"file,omitempty"`

	// inline is the inline definition as an agent file of its own; line is
	// the entry's line, toolLines and mcpLines those of its tools and MCP
	// servers, in the parent's agent file; at is where the definition is
	// written there (see inlineSource).
	inline              []byte
	line                int
	toolLines, mcpLines []int
	at                  inlineAt
}

// inlineAt is where an inline definition is written in its parent's
// agent file: the line and column of its first key, the lines of the keys
// that are not the agent file's (description, file) with the line of the
// key after each (0 for none), and whether it is written in flow style, on
// lines it may share with other entries.
type inlineAt struct {
	line, column int
	drop         [][2]int
	flow         bool
}

var subAgentName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)

// UnmarshalYAML reads an entry, keeping an inline definition as the agent
// file it is.
func (s *SubAgent) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: agents: want {name: NAME, description: TEXT, file: AGENT.yaml} or an inline definition", n.Line)
	}
	s.line = n.Line
	s.at = inlineAt{line: n.Line, column: n.Column, flow: n.Style&yaml.FlowStyle != 0}
	def := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "description", "file":
			next := 0
			if i+2 < len(n.Content) {
				next = n.Content[i+2].Line
			}
			s.at.drop = append(s.at.drop, [2]int{k.Line, next})
		}
		switch k.Value {
		case "description":
			s.Description = v.Value
		case "file":
			s.File = v.Value
		case "name":
			s.Name = v.Value
			def.Content = append(def.Content, k, v)
		default:
			def.Content = append(def.Content, k, v)
			switch k.Value {
			case "tools":
				s.toolLines = itemLines(v)
			case "mcp":
				s.mcpLines = itemLines(v)
			}
		}
	}
	if !subAgentName.MatchString(s.Name) {
		return fmt.Errorf("line %d: agents: name %q: want 1 to 40 letters, digits, '_' or '-'", n.Line, s.Name)
	}
	if s.File != "" {
		if len(def.Content) > 2 {
			return fmt.Errorf("line %d: sub-agent %s: give file or an inline definition, not both", n.Line, s.Name)
		}
		return nil
	}
	b, err := yaml.Marshal(def)
	if err != nil {
		return fmt.Errorf("line %d: sub-agent %s: %w", n.Line, s.Name, err)
	}
	s.inline = b
	return nil
}

// MarshalYAML writes the entry as it was read.
func (s SubAgent) MarshalYAML() (any, error) {
	out := map[string]any{}
	if s.inline != nil {
		if err := yaml.Unmarshal(s.inline, &out); err != nil {
			return nil, err
		}
	}
	out["name"] = s.Name
	if s.Description != "" {
		out["description"] = s.Description
	}
	if s.File != "" {
		out["file"] = s.File
	}
	return out, nil
}

// itemLines are the lines of a sequence's items.
func itemLines(n *yaml.Node) []int {
	var lines []int
	for _, c := range n.Content {
		lines = append(lines, c.Line)
	}
	return lines
}

// ErrSubAgent: a sub-agent asks for more than its parent has, or its
// definition does not read.
var ErrSubAgent = errors.New("sub-agent refused")

// subAgent is a sub-agent ready to be delegated to.
type subAgent struct {
	SubAgent
	af *AgentFile
	// file is the agent file its definition is written in; where, the
	// line of it that begins the definition.
	file, where string
}

// resolve reads a sub-agent's definition and checks that it narrows its
// parent's, and that the sub-agents it declares narrow its own, and
// theirs, so that a tree whose agent deep down asks for more does not
// start (its parent would fail only once its turn delegated).
func (s SubAgent) resolve(parent *AgentFile) (*subAgent, error) {
	return s.resolveUnder(parent, parent.describe(), map[string]bool{})
}

// resolveUnder is resolve of a definition declared in the one at above,
// checking below it each pair of definitions (declaring, declared) not
// yet in seen: a file that declares itself as its sub-agent is checked
// once, not without end.
func (s SubAgent) resolveUnder(parent *AgentFile, above string, seen map[string]bool) (*subAgent, error) {
	sub, err := s.resolveOne(parent)
	if err != nil || seen[above+"\x00"+sub.where] {
		return sub, err
	}
	seen[above+"\x00"+sub.where] = true
	names := map[string]bool{}
	for _, n := range sub.af.Agents {
		if names[n.Name] {
			return nil, fmt.Errorf("%w: %s line %d: two sub-agents are named %s", ErrSubAgent, sub.af.describe(), n.line, n.Name)
		}
		names[n.Name] = true
		if _, err := n.resolveUnder(sub.af, sub.where, seen); err != nil {
			return nil, err
		}
	}
	return sub, nil
}

// resolveOne is resolve of the definition alone.
func (s SubAgent) resolveOne(parent *AgentFile) (*subAgent, error) {
	sub := &subAgent{SubAgent: s, file: parent.describe()}
	sub.where = fmt.Sprintf("%s line %d", sub.file, s.line)
	var err error
	if s.File != "" {
		path := parent.resolve(s.File)
		var af *AgentFile
		if af, err = LoadAgentFile(path); err != nil {
			return nil, fmt.Errorf("%w: %s: sub-agent %s: %w", ErrSubAgent, sub.where, s.Name, err)
		}
		sub.ownFile(af)
	} else if sub.af, err = ParseAgentFile(s.inlineSource(parent.Source), parent.Dir); err != nil {
		return nil, fmt.Errorf("%w: %s: sub-agent %s: %w", ErrSubAgent, sub.where, s.Name, err)
	} else {
		sub.af.writtenIn = sub.file
	}
	if err := sub.admit(parent); err != nil {
		return nil, err
	}
	return sub, nil
}

// ownFile makes af, read from a file of its own, the sub-agent's
// definition: an error of the check names that file's lines.
func (sub *subAgent) ownFile(af *AgentFile) {
	sub.af, sub.file = af, af.describe()
	sub.toolLines, sub.mcpLines = linesOf(af.Source, "tools"), linesOf(af.Source, "mcp")
}

// admit makes parent the agent file above the sub-agent's (see inherit)
// and checks that its tools, grants, limits and MCP servers narrow
// parent's.
//
// # Errors
//
// ErrSubAgent, naming the line to change, for a definition that asks for
// more than parent has.
func (sub *subAgent) admit(parent *AgentFile) error {
	sub.af.inherit(parent)
	if err := sub.narrows(parent); err != nil {
		return fmt.Errorf("%w: %w", ErrSubAgent, err)
	}
	return nil
}

// readmit checks an agent file that an upgrade (ResumeOptions.Upgrade)
// read again, of an agent that is a sub-agent (st.Parent) or was made from
// one (a workflow's delegation step: the agent files its definition keeps
// above it, else given, ResumeOptions.Above), as a delegation checks it
// (resolve): an edit must not widen what the delegation would refuse. It
// makes the agent file above af the one it is checked against.
//
// # Errors
//
// ErrSubAgent, naming the line to change, for a file that asks for more
// than the agent file above it; those of reading the one above from the
// store (see above).
func (e *Engine) readmit(ctx context.Context, af *AgentFile, st *checkpoint.State, given *AgentFile) error {
	name := af.Name
	if p := st.Parent; p != nil && p.Name != "" {
		name = p.Name
	}
	parent, err := e.above(ctx, st, given)
	if err != nil || parent == nil {
		return err
	}
	sub := &subAgent{SubAgent: SubAgent{Name: name}, where: af.describe()}
	for _, s := range parent.Agents {
		if s.Name == name {
			sub.SubAgent, sub.where = s, fmt.Sprintf("%s line %d", parent.describe(), s.line)
		}
	}
	sub.ownFile(af)
	return sub.admit(parent)
}

// inherit makes parent the agent file above af: its approval rules bind
// af's calls, and a sandbox limit af leaves out is parent's, not the
// sandbox's default (which may be wider than parent's). For a module
// parent has too, a limit that af's entry for it and af's sandbox: both
// leave out is the one parent's entry for it runs with (its limits:, else
// parent's sandbox:), so a limit given on a parent's module entry binds
// the sub-agents below it as one given in its sandbox: does.
func (af *AgentFile) inherit(parent *AgentFile) {
	af.parent = parent
	own := af.Sandbox
	af.Sandbox = parent.Sandbox.overriddenBy(own)
	for i, ref := range af.Tools {
		if p, ok := parentRef(parent, af, ref); ok {
			af.Tools[i].Limits = parent.Sandbox.overriddenBy(p.Limits).overriddenBy(own).overriddenBy(ref.Limits)
		}
	}
}

// withAncestry gives the agent file of an agent rebuilt from its stored
// definition, st being its state, the agent files above it (see inherit),
// before its run's tools are made with its sandbox limits: delegating's,
// the agent file of the run whose delegation resumes it, else those
// above finds.
func (e *Engine) withAncestry(ctx context.Context, af *AgentFile, st *checkpoint.State, delegating, given *AgentFile) error {
	if af.parent != nil {
		return nil
	}
	if delegating != nil && st.Parent != nil {
		af.inherit(delegating)
		return nil
	}
	p, err := e.above(ctx, st, given)
	if p != nil {
		af.inherit(p)
	}
	return err
}

// restoreAncestry gives the agent file of an agent rebuilt from its
// definition the agent files above it, if withAncestry did not (a run
// rebuilt otherwise, as a session), before its calls are judged. A
// delegation gives a new sub-agent its parent's agent file itself
// (resolve), as a workflow's delegation step gives its new agent the
// parent file.
//
// # Errors
//
// Those of above: the approval rules above the agent are unknown, so no
// call may be judged.
func (r *run) restoreAncestry(ctx context.Context) error {
	if r.af.parent != nil || r.aboveRead {
		return nil
	}
	p, err := r.engine.above(ctx, r.state(), nil)
	if err != nil {
		return err
	}
	if p != nil {
		r.af.inherit(p)
	}
	r.aboveRead = true
	return nil
}

// above is the agent file above the agent whose state is st, with those
// above it, or nil for none: for a sub-agent, its parent's, read from the
// store along its lineage; for an agent made from a sub-agent's
// definition (a workflow's delegation step), the ones its definition
// keeps (Definition.Above); else given (ResumeOptions.Above), else none,
// unless Config.UnkeptAbove says the agent has some its store does not
// keep.
//
// # Errors
//
// Those of reading them from the store, and Config.UnkeptAbove's.
func (e *Engine) above(ctx context.Context, st *checkpoint.State, given *AgentFile) (*AgentFile, error) {
	if p := st.Parent; p != nil {
		return e.parentFile(ctx, p.Agent)
	}
	if len(st.Definition.Above) > 0 {
		return keptAbove(e.store, st.Agent, st.Definition.Above)
	}
	if given != nil || e.unkeptAbove == nil {
		return given, nil
	}
	if err := e.unkeptAbove(ctx, e.store, st.Agent); err != nil {
		return nil, unkeptError{err}
	}
	return nil, nil
}

// unkeptError is Config.UnkeptAbove's refusal, as above returns it: the
// agent files above the agent are not kept, so what they allow is unknown.
type unkeptError struct{ error }

func (e unkeptError) Unwrap() error { return e.error }

// keepAbove stores the agent files above af (see inherit), nearest first,
// for the definition of an agent made from a sub-agent's definition
// rather than by a delegation (Definition.Above).
func (e *Engine) keepAbove(af *AgentFile) ([]checkpoint.AboveFile, error) {
	var out []checkpoint.AboveFile
	for p, up := af.parent, 0; p != nil && up < maxDepth; p, up = p.parent, up+1 {
		digest, err := e.store.PutBlob(p.Source)
		if err != nil {
			return nil, fmt.Errorf("keep the agent file %s above it: %w", p.describe(), err)
		}
		out = append(out, checkpoint.AboveFile{File: digest, Path: p.File, Dir: p.Dir})
	}
	return out, nil
}

// keptAbove reads back the agent files that agent's definition keeps
// above it (keepAbove): the nearest, with those above it.
func keptAbove(store checkpoint.Store, agent string, kept []checkpoint.AboveFile) (*AgentFile, error) {
	var below *AgentFile
	for i := len(kept) - 1; i >= 0; i-- {
		k := kept[i]
		src, err := store.Blob(k.File)
		if err != nil {
			return nil, fmt.Errorf("%w: agent file %s above agent %s: %w", ErrDefinition, cmp.Or(k.Path, "(inline)"), agent, err)
		}
		af, err := parseStored(src, k.Dir)
		if err != nil {
			return nil, fmt.Errorf("stored agent file %s above agent %s: %w", cmp.Or(k.Path, "(inline)"), agent, err)
		}
		af.File = k.Path
		if below != nil {
			af.inherit(below)
		}
		below = af
	}
	return below, nil
}

// parentFile is the agent file of parent, the agent a sub-agent is of,
// read from the store with those above it (see storedAncestry).
func (e *Engine) parentFile(ctx context.Context, parent string) (*AgentFile, error) {
	p, err := e.storedAncestry(ctx, parent, maxDepth)
	if err != nil {
		return nil, fmt.Errorf("read the agent file of agent %s, which it is a sub-agent of: %w", parent, err)
	}
	return p, nil
}

// storedAncestry is the agent file agent id was made with, and those
// above it (see above), at most depth agents up its lineage.
func (e *Engine) storedAncestry(ctx context.Context, id string, depth int) (*AgentFile, error) {
	rec, err := e.store.Read(id)
	if err != nil {
		return nil, err
	}
	def := rec.State.Definition
	src, err := e.store.Blob(def.AgentFile)
	if err != nil {
		return nil, fmt.Errorf("%w: agent file of %s: %w", ErrDefinition, id, err)
	}
	af, err := parseStored(src, def.AgentDir)
	if err != nil {
		return nil, fmt.Errorf("stored agent file of %s: %w", id, err)
	}
	af.File = def.AgentPath
	var parent *AgentFile
	if p := rec.State.Parent; p != nil && depth > 1 {
		parent, err = e.storedAncestry(ctx, p.Agent, depth-1)
	} else if p == nil {
		parent, err = e.above(ctx, rec.State, nil)
	}
	if err != nil {
		return nil, err
	}
	if parent != nil {
		af.inherit(parent)
	}
	return af, nil
}

// inlineSource is the inline definition as an agent file of its own,
// each of its lines where the parent's agent file src has it (the lines
// before it blank, the entry's dash and its keys that are not the agent
// file's blanked out), so that an error in it names the line of the
// parent's file. A definition in flow style, or one src does not hold, is
// the definition written out anew, whose lines are its own.
func (s SubAgent) inlineSource(src []byte) []byte {
	lines := strings.SplitAfter(string(src), "\n")
	first, col := s.at.line-1, s.at.column-1
	if s.at.flow || first < 0 || first >= len(lines) || col <= 0 || len(lines[first]) < col {
		return s.inline
	}
	var b strings.Builder
	b.WriteString(strings.Repeat("\n", first))
	for i := first; i < len(lines); i++ {
		line := lines[i]
		if i == first {
			line = strings.Repeat(" ", col) + line[col:] // the entry's "- "
		} else if !inEntry(line, col) {
			break
		}
		if s.dropped(i + 1) {
			line = "\n"
		}
		b.WriteString(line)
	}
	return []byte(b.String())
}

// inEntry reports whether a line after an entry's first is still the
// entry's: blank, a comment, or indented at least as far as its keys.
func inEntry(line string, col int) bool {
	trimmed := strings.TrimLeft(line, " ")
	indent := len(line) - len(trimmed)
	trimmed = strings.TrimSpace(trimmed)
	return trimmed == "" || strings.HasPrefix(trimmed, "#") || indent >= col
}

// dropped reports whether line n of the parent's agent file holds a key
// of the entry that is not the agent file's, or its value.
func (s SubAgent) dropped(n int) bool {
	for _, d := range s.at.drop {
		if n >= d[0] && (d[1] == 0 || n < d[1]) {
			return true
		}
	}
	return false
}

// describe names an agent file for an error: its path, or "the agent file".
func (af *AgentFile) describe() string {
	if af.File != "" {
		return af.File
	}
	if af.writtenIn != "" {
		return af.writtenIn
	}
	return "the agent file"
}

// linesOf finds the lines of the items of a list of an agent file's
// source: its tools or its MCP servers.
func linesOf(src []byte, key string) []int {
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return itemLines(m.Content[i+1])
		}
	}
	return nil
}

// toolLine says where the sub-agent's i-th tool is written.
func (s *subAgent) toolLine(i int) string { return s.itemLine(s.toolLines, i) }

// mcpLine says where the sub-agent's i-th MCP server is written.
func (s *subAgent) mcpLine(i int) string { return s.itemLine(s.mcpLines, i) }

func (s *subAgent) itemLine(lines []int, i int) string {
	if i < len(lines) {
		return fmt.Sprintf("%s line %d", s.file, lines[i])
	}
	return s.where
}

// checkSubModels opens the model of each sub-agent af declares, and of
// theirs, as each one's run will, so that a tree whose sub-agent's script
// is not there (or is no script) does not start: its parent would fail
// only once its turn delegated. Each pair of definitions (declaring,
// declared) is opened once, as resolveUnder checks them. Opening a
// provider other than script reaches no network.
//
// # Errors
//
// ErrSubAgent, naming the sub-agent's line, wrapping openModel's error.
func (af *AgentFile) checkSubModels() error {
	return af.checkSubModelsUnder(af.describe(), map[string]bool{})
}

func (af *AgentFile) checkSubModelsUnder(above string, seen map[string]bool) error {
	for _, s := range af.Agents {
		sub, err := s.resolveOne(af)
		if err != nil {
			return err
		}
		if seen[above+"\x00"+sub.where] {
			continue
		}
		seen[above+"\x00"+sub.where] = true
		if callerTurns(sub.af.Model) {
			continue // it names no script to read
		}
		if _, _, err := openModel(sub.af, nil); err != nil {
			return fmt.Errorf("%w: %s: sub-agent %s: %w", ErrSubAgent, sub.where, s.Name, err)
		}
		if err := sub.af.checkSubModelsUnder(sub.where, seen); err != nil {
			return err
		}
	}
	return nil
}
