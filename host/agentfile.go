package host

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
	"github.com/cairnrun/cairn/internal/yamlkeys"
)

// AgentFile is what an agent is made of: its model, system prompt, tools,
// the sandbox grants of those tools, and its limits. It is read from YAML;
// relative paths in it are relative to the file's directory (Dir).
//
//	name: hello
//	model: {provider: script, script: script.yaml}
//	system: You are a careful assistant.
//	workspace: workspace
//	tools:
//	  - module: builtin
//	  - module: ../tools/textstats/textstats.wasm
//	    grant: {workspace: ro}
//	sandbox: {memory: 64MiB, timeout: 10s}
//	limits: {max_rounds: 20}
//	context: {budget: 8000, policy: summarize}
//	approvals:
//	  - {tool: write_file, args: {path: "drafts/**"}, action: allow}
//	  - {tool: write_file, action: ask}
type AgentFile struct {
	Name   string     `yaml:"name" json:"name"`
	Model  model.Spec `yaml:"model" json:"model"`
	System string     `yaml:"system" json:"system,omitempty"`
	// Prompt is the user's message when the caller gives none.
	Prompt string `yaml:"prompt" json:"prompt,omitempty"`
	// Workspace is the directory the tools work in, unless the caller
	// names another.
	Workspace string    `yaml:"workspace" json:"workspace,omitempty"`
	Tools     []ToolRef `yaml:"tools" json:"tools"`
	Sandbox   Limits    `yaml:"sandbox" json:"sandbox"`
	Limits    RunLimits `yaml:"limits" json:"limits"`
	// Approvals decide which calls run, which are denied and which a
	// person decides; the first rule that matches a call applies, and a
	// call no rule matches runs.
	Approvals []Rule `yaml:"approvals" json:"approvals,omitempty"`
	// MCP lists MCP servers whose tools run beside the wasm tools, outside
	// the sandbox (see MCPServer).
	MCP []MCPServer `yaml:"mcp" json:"mcp,omitempty"`
	// Todos gives the model the todo_write tool, its task list.
	Todos bool `yaml:"todos" json:"todos,omitempty"`
	// Memory names the memory namespace the model keeps facts in with the
	// remember, recall and forget tools (see memory.go); agents that name
	// the same namespace share it.
	Memory string `yaml:"memory" json:"memory,omitempty"`
	// Agents are the sub-agents the model may delegate tasks to (see
	// SubAgent); MaxParallel bounds the delegations that run at once.
	Agents      []SubAgent `yaml:"agents" json:"agents,omitempty"`
	MaxParallel int        `yaml:"max_parallel" json:"max_parallel,omitempty"`
	// Record is what is kept of the files each call read, for `cairn
	// verify`: their digests (the default), or their content too (reads).
	Record RecordMode `yaml:"record" json:"record,omitempty"`
	// Context bounds what each request sends the model (see ContextSpec).
	Context ContextSpec `yaml:"context" json:"context,omitzero"`

	// Dir is the directory relative paths are resolved against; File is
	// the file it was read from, if any; Source its bytes. They are not
	// part of the YAML.
	Dir    string `yaml:"-" json:"-"`
	File   string `yaml:"-" json:"-"`
	Source []byte `yaml:"-" json:"-"`

	// parent is, for a sub-agent's agent file, its parent's: the approval
	// rules of every agent file up the chain bind the sub-agent's calls
	// (see run.judge). A delegation sets it (SubAgent.resolve), a resume
	// of a sub-agent reads it back from its lineage, and one of an agent
	// made from a sub-agent's definition (SubAgentFile) from what its
	// definition keeps (Engine.above); no YAML sets it.
	parent *AgentFile
	// writtenIn is, for a sub-agent defined inline, the agent file its
	// definition is written in, whose lines its errors name (describe).
	writtenIn string
}

// BuiltinModule is the ToolRef.Module name of the built-in tools.
const BuiltinModule = "builtin"

// ToolRef names one tool module and what it is granted.
type ToolRef struct {
	// Module is BuiltinModule or the path of a .wasm file.
	Module string `yaml:"module" json:"module"`
	// Only, when set, picks these tools of the module; the rest are not
	// offered to the model.
	Only []string `yaml:"only" json:"only,omitempty"`
	// Grant is what the module's tools may have. For external modules the
	// zero value grants nothing; the built-in tools get what they ask for.
	Grant *Grant `yaml:"grant" json:"grant,omitempty"`
	// Limits override the agent's sandbox limits for this module.
	Limits Limits `yaml:"limits" json:"limits"`
}

// Grant is what the agent file allows a module's tools.
type Grant struct {
	Workspace abi.Access `yaml:"workspace" json:"workspace,omitempty"`
	// Env names host environment variables passed through, with their
	// values at the time of the call.
	Env    []string `yaml:"env" json:"env,omitempty"`
	Clock  bool     `yaml:"clock" json:"clock,omitempty"`
	Random bool     `yaml:"random" json:"random,omitempty"`
	// Mounts are more host directories the module's tools see, read-only.
	Mounts []ExtraMount `yaml:"mounts" json:"mounts,omitempty"`
	// Imports, when set, are the only WASI functions the module may
	// import; a call of a module that imports another fails, naming it.
	// Unset: every WASI preview 1 function but the socket ones.
	Imports []string `yaml:"imports" json:"imports,omitempty"`
	// Net grants the network (see NetGrant); nil grants none.
	Net *NetGrant `yaml:"net" json:"net,omitempty"`
}

// ExtraMount is a host directory a module's tools see read-only at Guest.
type ExtraMount struct {
	// Host is relative to the agent file's directory.
	Host  string `yaml:"host" json:"host"`
	Guest string `yaml:"guest" json:"guest"`
}

// Limits bound one tool call. Zero fields take the sandbox's defaults.
type Limits struct {
	Memory  Size     `yaml:"memory" json:"memory,omitempty"`
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
	// Output caps stdout, Stderr the tool's log, Stdin the request.
	Output Size `yaml:"output" json:"output,omitempty"`
	Stderr Size `yaml:"stderr" json:"stderr,omitempty"`
	Stdin  Size `yaml:"stdin" json:"stdin,omitempty"`
	// Files bounds the files a call holds open at once.
	Files int `yaml:"files" json:"files,omitempty"`
	// Staging bounds the bytes a call may stage (each changed path costs
	// 4 KiB of it besides its bytes), StagedPaths the paths it may change;
	// a call past either fails and none of its changes are applied.
	Staging     Size `yaml:"staging" json:"staging,omitempty"`
	StagedPaths int  `yaml:"staged_paths" json:"staged_paths,omitempty"`
}

// RunLimits bound one run. Zero means no limit, except MaxRounds, whose zero
// means 50.
//
// Rounds count since the user's last prompt; tokens and cost count over
// the agent's whole life; time counts from the start of each run. All of
// them carry across resumes except time, which starts again.
type RunLimits struct {
	MaxRounds int   `yaml:"max_rounds" json:"max_rounds,omitempty"`
	MaxTokens int64 `yaml:"max_tokens" json:"max_tokens,omitempty"`
	// MaxCost is in US dollars; it needs prices in the model's spec.
	MaxCost float64  `yaml:"max_cost" json:"max_cost,omitempty"`
	MaxTime Duration `yaml:"max_time" json:"max_time,omitempty"`
}

// raise returns l with every limit that o sets replaced by o's.
func (l RunLimits) raise(o RunLimits) RunLimits {
	if o.MaxRounds > 0 {
		l.MaxRounds = o.MaxRounds
	}
	if o.MaxTokens > 0 {
		l.MaxTokens = o.MaxTokens
	}
	if o.MaxCost > 0 {
		l.MaxCost = o.MaxCost
	}
	if o.MaxTime > 0 {
		l.MaxTime = o.MaxTime
	}
	return l
}

// defaultMaxRounds bounds a run whose agent file sets no max_rounds.
const defaultMaxRounds = 50

// ParseAgentFile reads an agent file from YAML. dir is what relative paths
// are resolved against. Unknown keys are errors, so a typo is not silently
// ignored.
//
// # Errors
//
// The YAML's own errors (with line numbers), a number that is not whole
// for a key that takes a whole number (which YAML would cut to its whole
// part), and the checks of Validate.
func ParseAgentFile(data []byte, dir string) (*AgentFile, error) {
	if err := yamlkeys.WholeNumbers(data, reflect.TypeFor[AgentFile]()); err != nil {
		return nil, err
	}
	af, err := parseStored(data, dir)
	if err != nil {
		return nil, err
	}
	if err := af.checkAmounts(); err != nil {
		return nil, err
	}
	return af, nil
}

// parseStored parses the agent file an agent was made with, as
// ParseAgentFile does but for checkAmounts and its check of whole numbers:
// a cairn that did not check them may have stored it.
func parseStored(data []byte, dir string) (*AgentFile, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	af := &AgentFile{Dir: dir, Source: data}
	if err := dec.Decode(af); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("agent file is empty")
		}
		return nil, yamlkeys.Friendly(err, reflect.TypeOf(af))
	}
	if err := af.validate(); err != nil {
		return nil, err
	}
	return af, nil
}

// LoadAgentFile reads and validates the agent file at path.
func LoadAgentFile(path string) (*AgentFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read agent file: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("read agent file: %w", err)
	}
	af, err := ParseAgentFile(data, dir)
	if err != nil {
		return nil, fmt.Errorf("agent file %s: %w", path, err)
	}
	// Checked here, not by ParseAgentFile: an agent a cairn that did not
	// check it stored is resumed as it started.
	if n, found := yamlkeys.SecondDocument(data); found {
		line := ""
		if n > 0 {
			line = fmt.Sprintf("line %d: ", n)
		}
		return nil, fmt.Errorf("agent file %s: %sa second YAML document (after ---), which would be left out: "+
			"an agent file is one document; put its keys in the first", path, line)
	}
	af.File, _ = filepath.Abs(path)
	return af, nil
}

// Validate checks what can be checked without loading any module,
// including that a context budget holds the system prompt and the tools
// the file alone makes known (see context_room.go).
//
// # Errors
//
// A description of the first problem found; ErrContextBudget, wrapped,
// for a budget too small.
func (af *AgentFile) Validate() error {
	if err := af.validate(); err != nil {
		return err
	}
	return af.checkAmounts()
}

// validate is Validate without checkAmounts.
func (af *AgentFile) validate() error {
	if af.Name == "" {
		return errors.New("name is missing")
	}
	if af.Model.Provider == "" {
		return errors.New("model.provider is missing (script, openai or anthropic)")
	}
	if !slices.Contains(model.Providers, af.Model.Provider) {
		return fmt.Errorf("model.provider %q: want %s", af.Model.Provider, strings.Join(model.Providers, ", "))
	}
	for i, s := range af.MCP {
		if err := s.validate(); err != nil {
			return fmt.Errorf("mcp[%d]: %w", i, err)
		}
		if j := slices.IndexFunc(af.MCP[:i], func(o MCPServer) bool { return o.Name == s.Name }); j >= 0 {
			return fmt.Errorf("mcp[%d]: name %q is mcp[%d]'s already: give each server a name of its own", i, s.Name, j)
		}
	}
	if len(af.Tools) == 0 && len(af.MCP) == 0 {
		return errors.New("tools is empty: list at least `- module: builtin`")
	}
	for i, t := range af.Tools {
		if t.Module == "" {
			return fmt.Errorf("tools[%d]: module is missing", i)
		}
		if t.Grant != nil && !abi.AccessReadWrite.Covers(t.Grant.Workspace) {
			return fmt.Errorf("tools[%d]: grant.workspace %q: want \"\", ro or rw", i, t.Grant.Workspace)
		}
		if t.Grant != nil {
			for j, m := range t.Grant.Mounts {
				if m.Host == "" || !path.IsAbs(m.Guest) || path.Clean(m.Guest) == "/" || path.Clean(m.Guest) == abi.WorkspaceDir {
					return fmt.Errorf("tools[%d]: grant.mounts[%d]: want {host: DIR, guest: /ABSOLUTE/PATH}, not / or %s", i, j, abi.WorkspaceDir)
				}
			}
		}
	}
	for i, r := range af.Approvals {
		if err := r.validate(); err != nil {
			return fmt.Errorf("approvals[%d]: %w", i, err)
		}
	}
	if af.MaxParallel < 0 {
		return af.atLine(errors.New("max_parallel cannot be negative"), "max_parallel")
	}
	if af.Memory != "" {
		if err := checkpoint.CheckMemoryNamespace(af.Memory); err != nil {
			return af.atLine(err, "memory")
		}
	}
	_, section := findKey(af.Source, "context")
	_, budget := findKey(af.Source, "context", "budget")
	if key, err := af.Context.validate(section, budget); err != nil {
		return af.atLine(err, "context", key)
	}
	if af.Context.Budget > 0 {
		if err := af.Context.roomFor(af.System, af.fileTools()); err != nil {
			return af.atLine(err, "context", "budget")
		}
	}
	l := af.Limits
	for _, f := range []struct {
		key      string
		negative bool
	}{{"max_rounds", l.MaxRounds < 0}, {"max_tokens", l.MaxTokens < 0}, {"max_cost", l.MaxCost < 0}} {
		if f.negative {
			return af.atLine(fmt.Errorf("limits: %s cannot be negative", f.key), "limits", f.key)
		}
	}
	return nil
}

// checkZeroLimits refuses a limit written as 0, which reads as allowing
// nothing but would mean no limit (max_rounds: 50 rounds).
func (af *AgentFile) checkZeroLimits() error {
	l := af.Limits
	for _, f := range []struct {
		key, value, want, absent string
		zero                     bool
	}{
		{"max_rounds", "0", "1 or more", "50", l.MaxRounds == 0},
		{"max_tokens", "0", "1 or more", "no limit", l.MaxTokens == 0},
		{"max_cost", "0", "an amount above 0", "no limit", l.MaxCost == 0},
		{"max_time", "0s", "a duration above 0", "no limit", l.MaxTime == 0},
	} {
		if _, written := findKey(af.Source, "limits", f.key); written && f.zero {
			return af.atLine(fmt.Errorf("limits: %s %s: want %s, or leave the key out for %s", f.key, f.value, f.want, f.absent), "limits", f.key)
		}
	}
	return nil
}

// checkAmounts refuses a price or max_cost that is not a number of
// dollars, a limit written as 0 (checkZeroLimits), and a negative
// model.timeout or model.max_tokens, which a cairn
// once took (a negative bound as the default, a NaN price as a cost of
// $-9223372036854). An agent such a cairn stored is read back without
// this check (parseStored), and resumed as it started.
func (af *AgentFile) checkAmounts() error {
	if !model.Dollars(af.Limits.MaxCost) {
		return af.atLine(fmt.Errorf("limits: max_cost %v: want US dollars, 0 or more", af.Limits.MaxCost), "limits", "max_cost")
	}
	if err := af.checkZeroLimits(); err != nil {
		return err
	}
	if af.Model.Timeout < 0 {
		return af.atLine(fmt.Errorf("model.timeout %s: want a duration above 0 (or leave it out for 2m)", af.Model.Timeout), "model", "timeout")
	}
	if af.Model.MaxTokens < 0 {
		return af.atLine(fmt.Errorf("model.max_tokens %d: want a number of tokens above 0 (or leave it out for the provider's default)", af.Model.MaxTokens), "model", "max_tokens")
	}
	if err := af.Model.Price.Check(); err != nil {
		return af.atLine(fmt.Errorf("model.%w", err), "model", "price")
	}
	return nil
}

// atLine is err said at the line of the key at path in the agent file's
// source, or of as much of the path as is there; err as it is when the
// file has no source (it was made in code).
func (af *AgentFile) atLine(err error, path ...string) error {
	if line := keyLine(af.Source, path...); line > 0 {
		return fmt.Errorf("line %d: %w", line, err)
	}
	return err
}

// inFile is err where the agent file says what failed: its file and the
// line of the key at path ("agent.yaml line 3: err"), or as much of that
// as is known.
func (af *AgentFile) inFile(err error, path ...string) error {
	if line := keyLine(af.Source, path...); line > 0 {
		return fmt.Errorf("%s line %d: %w", af.describe(), line, err)
	}
	return fmt.Errorf("%s: %w", af.describe(), err)
}

// keyLine is the line of the key at path in an agent file's source, or of
// as much of the path as is there; 0 if the source does not read.
func keyLine(src []byte, path ...string) int {
	line, _ := findKey(src, path...)
	return line
}

// findKey is keyLine's line, and whether the whole path is there.
func findKey(src []byte, path ...string) (line int, found bool) {
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil || len(doc.Content) == 0 {
		return 0, false
	}
	n := doc.Content[0]
	for _, key := range path {
		var next *yaml.Node
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				line, next = n.Content[i].Line, n.Content[i+1]
			}
		}
		if next == nil {
			return line, false
		}
		n = next
	}
	return line, true
}

// resolve resolves p against the agent file's directory.
func (af *AgentFile) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(af.Dir, p)
}

// WorkspaceDir is the workspace the agent file names, resolved; "" if none.
func (af *AgentFile) WorkspaceDir() string { return af.resolve(af.Workspace) }

// maxRounds is the effective round limit.
func (l RunLimits) maxRounds() int {
	if l.MaxRounds == 0 {
		return defaultMaxRounds
	}
	return l.MaxRounds
}

// Duration is a time.Duration written in YAML as "10s", "1m30s".
type Duration time.Duration

// UnmarshalYAML reads a Go duration string (see ParseDuration).
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseDuration(n.Value)
	var long *DurationTooLongError
	switch {
	case errors.As(err, &long):
		return fmt.Errorf("line %d: %w", n.Line, err)
	case err != nil && !durationSyntax.MatchString(n.Value):
		return fmt.Errorf("line %d: %q is no duration: want one such as 30s or 1m30s, its unit written (ns, us, ms, s, m, h)", n.Line, n.Value)
	case err != nil || v < 0:
		return fmt.Errorf("line %d: duration %q is negative: want one above 0, such as 30s or 1m30s", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }
