package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/host/model"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// toolModule is one tool module as an agent uses it: its bytes (kept in the
// store by digest), its manifest and what the agent file grants it.
type toolModule struct {
	Ref ToolRef
	// Wasm is the module's bytes when they are in memory; nil for a
	// module whose file is read when its bytes are first needed.
	Wasm     []byte
	file     *moduleFile
	Manifest abi.Manifest
	// identity is who the module's file was before it was read, for
	// moduleDigests; "" when not known.
	identity string
	// damaged says the store's blob of a rebuilt module was damaged, and
	// its bytes came from its source; note is what the run warns of it.
	damaged bool
	note    string
}

// source is where the module's bytes come from, in words: built into
// cairn, or its file.
func (m toolModule) source() string {
	if _, ok := embeddedWasm(m.Ref.Module); ok {
		return "the copy built into cairn"
	}
	return "its file " + m.Ref.Module
}

// bytes returns the module's bytes, reading its file the first time.
func (m toolModule) bytes() ([]byte, error) {
	if m.file != nil {
		return m.file.read()
	}
	return m.Wasm, nil
}

// recorded is the digest the module must have once loaded: the one the
// start recorded for a module read from its file, "" for any.
func (m toolModule) recorded() string {
	if m.file != nil {
		return m.file.recordedDigest()
	}
	return ""
}

// sections is what of the module a start reads (its manifest and
// imports): its bytes, or its head.
func (m toolModule) sections() []byte {
	if m.file != nil {
		return m.file.head
	}
	return m.Wasm
}

// tool is one tool bound to its module, which may still be compiling,
// and its policy.
type tool struct {
	spec   abi.Tool
	module *deferredLoad
	ref    ToolRef
	grant  Grant
	schema *schema
	limits Limits
	// remote is the MCP server of a tool that runs outside the sandbox.
	remote ExternalTools
	server string
	// native is the tool of one the host carries out itself.
	native nativeTool
	// guard is the module's network grant; nil grants none.
	guard *netguard.Guard
}

// toolset is every tool an agent offers the model, by name.
type toolset struct {
	tools map[string]*tool
	specs []model.Tool
	// loads are the modules compiling, to say once of each that failed.
	loads []*moduleLoad
	// notes are what the run says once of its modules before their loads
	// (a damaged blob of one, see storeRebuilt).
	notes []string
	// servers are the MCP servers the tools of the set reach.
	servers []ExternalTools
	// unstarted says the agent has MCP servers that were not started (a
	// manual resume, which runs nothing): a tool the set lacks is taken
	// for one of theirs, the agent's others all being in the set.
	unstarted bool
	// run is the run whose calls the native tools serve.
	run *run
}

type moduleLoad struct {
	ref      ToolRef
	loading  *deferredLoad
	reported bool
}

// ErrGrant is returned when a tool asks for more than its agent file grants.
var ErrGrant = errors.New("tool asks for more than is granted")

// readModule returns the bytes of the module a ToolRef names.
func readModule(af *AgentFile, ref ToolRef) ([]byte, error) {
	if wasm, ok := embeddedWasm(ref.Module); ok {
		return wasm, nil
	}
	b, err := os.ReadFile(af.resolve(ref.Module))
	if err != nil {
		return nil, missing("read", err)
	}
	return b, nil
}

// newToolset binds the tools of every module, whose loading (compiling,
// in the background) starts once the run's first model request is on its
// way (see loading.go): the manifests say all the model needs to know, so
// the first request goes out while the code compiles, and a call waits
// for its module. A tool whose needs exceed its grant, two
// tools of one name, or a schema that does not compile fail the whole
// set: an agent does not start half-equipped. A module whose manifest
// reads but whose code does not compile is kept: its tools answer every
// call with the compile error, so the model learns of it and the run goes
// on, and the run warns of it once (see newWarnings).
func newToolset(ctx context.Context, rt *sandbox.Runtime, af *AgentFile, mods []toolModule) (*toolset, error) {
	ts := &toolset{tools: map[string]*tool{}}
	for _, m := range mods {
		loading := newDeferredLoad(ctx, rt, m.bytes)
		loading.recorded = m.recorded() // its file's bytes are not kept for it
		ts.loads = append(ts.loads, &moduleLoad{ref: m.Ref, loading: loading})
		if m.note != "" {
			ts.notes = append(ts.notes, m.note)
		}
		if err := ts.add(af, m, loading); err != nil {
			return nil, fmt.Errorf("tool module %s: %w", m.Ref.Module, err)
		}
	}
	sort.Slice(ts.specs, func(i, j int) bool { return ts.specs[i].Name < ts.specs[j].Name })
	return ts, nil
}

// prepare readies every tool's module, in the background, for calls in
// the workspace ws (see sandbox.Loading.Prepare), so that the first call
// of each does not wait for its snapshot or its instance when the model
// took longer than those.
func (ts *toolset) prepare(ws string) {
	for _, t := range ts.tools {
		if t.remote != nil || t.native != nil {
			continue
		}
		t.module.Prepare(t.policy(ws))
	}
}

// newWarnings says the notes of the modules, once, and of each module
// that has failed to compile, once, that it does not load. It does not
// wait for modules still compiling.
func (ts *toolset) newWarnings() []string {
	out := ts.notes
	ts.notes = nil
	for _, l := range ts.loads {
		if l.reported || !l.loading.Done() {
			continue
		}
		if _, err := l.loading.Wait(context.Background()); err != nil {
			l.reported = true
			out = append(out, doesNotLoad(l.ref, err).Error())
		}
	}
	return out
}

func doesNotLoad(ref ToolRef, err error) error {
	return fmt.Errorf("tool module %s does not load: %w", ref.Module, err)
}

// CheckTools checks an agent file's tools as the start of its run does,
// with the same code, without compiling or running a module or connecting
// to an MCP server: each module reads and has a manifest, every tool an
// only: lists is its module's, no tool asks for more than its grant, no
// module imports a WASI function or the network its grant does not allow,
// each network grant reads (its allow entries, methods and secrets), no
// two tools share a name, and the tools cairn carries out (sub-agents,
// the task list, memory) can be offered, and a context: budget has room
// for them (ErrContextBudget). A caller that starts the agent
// later, a workflow's step, say, finds with it before anything has run
// what would keep that start from happening.
//
// # Errors
//
// What the run's start would return: ErrMissing for a module file that
// is not there, *NoToolError for a tool an only: names that its module
// lacks, ErrGrant for a tool or module that asks for more than its grant,
// ErrSubAgent for a sub-agent refused, ErrSecretUnset, each naming the
// module and what to change.
func CheckTools(af *AgentFile) error {
	ts, mods, err := checkedToolset(af)
	if err != nil {
		return err
	}
	if err := ts.addNatives(af); err != nil {
		return err
	}
	if err := af.checkSubModels(); err != nil {
		return err
	}
	return checkRoom(af, mods)
}

// checkedToolset is the toolset af's modules give, read from their files
// and checked against their grants, with no instance made.
func checkedToolset(af *AgentFile) (*toolset, []toolModule, error) {
	mods, err := loadModules(af)
	if err != nil {
		return nil, nil, err
	}
	ts, err := newToolset(context.Background(), nil, af, mods) // nil: nothing is loaded
	if err != nil {
		return nil, nil, err
	}
	return ts, mods, nil
}

func (ts *toolset) add(af *AgentFile, m toolModule, loading *deferredLoad) error {
	only := map[string]bool{}
	for _, n := range m.Ref.Only {
		if _, ok := m.Manifest.Lookup(n); !ok {
			return &NoToolError{Tool: n, Tools: toolNames(m.Manifest)}
		}
		only[n] = true
	}
	grant := grantOf(m)
	grant.Mounts = resolveMounts(af, grant.Mounts)
	if err := checkImportGrant(m, grant); err != nil {
		return err
	}
	guard, err := netGuard(m, grant)
	if err != nil {
		return err
	}
	for _, spec := range m.Manifest.Tools {
		if len(only) > 0 && !only[spec.Name] {
			continue
		}
		if err := checkGrant(spec, grant); err != nil {
			return err
		}
		if _, dup := ts.tools[spec.Name]; dup {
			return fmt.Errorf("tool %q is offered by two modules", spec.Name)
		}
		if why := schemaFault(json.RawMessage(spec.InputSchema)); why != "" {
			// `cairn tools pack` refuses it; a packer of another kind may not.
			return fmt.Errorf("tool %q: %s: model providers take only an object, and neither could an MCP client of `cairn mcp`; the module's manifest must change", spec.Name, why)
		}
		sch, err := compileSchema(spec.Name, spec.InputSchema)
		if err != nil {
			return fmt.Errorf("tool %q: %w", spec.Name, err)
		}
		ts.tools[spec.Name] = &tool{spec: spec, module: loading, ref: m.Ref, grant: grant, schema: sch,
			limits: af.Sandbox.overriddenBy(m.Ref.Limits), guard: guard}
		ts.specs = append(ts.specs, model.Tool{Name: spec.Name, Description: spec.Description,
			InputSchema: json.RawMessage(schemaText(spec.InputSchema))})
	}
	return nil
}

// resolveMounts makes the host paths of extra mounts absolute.
func resolveMounts(af *AgentFile, ms []ExtraMount) []ExtraMount {
	out := make([]ExtraMount, len(ms))
	for i, m := range ms {
		out[i] = ExtraMount{Host: af.resolve(m.Host), Guest: m.Guest}
	}
	return out
}

// grantOf is the module's grant: the agent file's, or for the built-in
// tools when the file says nothing, what they ask for.
func grantOf(m toolModule) Grant {
	if m.Ref.Grant != nil {
		return *m.Ref.Grant
	}
	if m.Ref.Module == BuiltinModule {
		return Grant{Workspace: abi.AccessReadWrite}
	}
	return Grant{}
}

// checkGrant refuses a tool that asks for more than its grant, saying what
// to add to the agent file.
func checkGrant(t abi.Tool, g Grant) error {
	var missing []string
	if !g.Workspace.Covers(t.Needs.Workspace) {
		missing = append(missing, fmt.Sprintf("workspace: %s", t.Needs.Workspace))
	}
	for _, e := range t.Needs.Env {
		if !contains(g.Env, e) {
			missing = append(missing, "env: ["+e+"]")
		}
	}
	if t.Needs.Clock && !g.Clock {
		missing = append(missing, "clock: true")
	}
	if t.Needs.Random && !g.Random {
		missing = append(missing, "random: true")
	}
	missing = append(missing, missingNet(t, g)...)
	if len(missing) > 0 {
		return fmt.Errorf("tool %q: %w: add to its grant in the agent file: %s",
			t.Name, ErrGrant, strings.Join(missing, ", "))
	}
	return nil
}

// checkImportGrant refuses a module that imports a WASI function its
// grant's imports do not allow, saying what to add to the agent file. A
// module whose imports do not read is left for compiling to report.
func checkImportGrant(m toolModule, g Grant) error {
	denied, err := sandbox.Policy{Imports: g.Imports}.DeniedImports(m.sections())
	if err != nil || len(denied) == 0 {
		return nil
	}
	fix := "add them to its grant's imports in the agent file"
	want := append(slices.Clone(g.Imports), denied...)
	if g.Imports == nil {
		fix = "a grant without imports allows every WASI function but the socket ones; list every function the module imports in its grant"
		want, _ = sandbox.Policy{Imports: []string{}}.DeniedImports(m.sections())
	}
	slices.Sort(want)
	return fmt.Errorf("%w: the module imports %s, which its grant does not allow: %s: imports: [%s]",
		ErrGrant, strings.Join(denied, ", "), fix, strings.Join(slices.Compact(want), ", "))
}

// policy is the sandbox policy of one call of t: the workspace mounted with
// the access the tool asks for (never more than granted), the environment
// variables it asks for, clock and randomness as asked.
func (t *tool) policy(workspace string) sandbox.Policy {
	p := sandbox.Policy{
		MemoryLimit:    int64(t.limits.Memory),
		Timeout:        time.Duration(t.limits.Timeout),
		StdoutLimit:    int64(t.limits.Output),
		StderrLimit:    int64(t.limits.Stderr),
		StdinLimit:     int64(t.limits.Stdin),
		MaxOpenFiles:   t.limits.Files,
		StagingLimit:   int64(t.limits.Staging),
		MaxStagedPaths: t.limits.StagedPaths,
		RealClock:      t.spec.Needs.Clock,
		RealRandom:     t.spec.Needs.Random,
		Imports:        t.grant.Imports,
	}
	if t.guard != nil {
		p.Net = t.guard.Call()
	}
	if t.spec.Needs.Workspace != abi.AccessNone {
		p.Mounts = []sandbox.Mount{{HostPath: workspace, GuestPath: abi.WorkspaceDir,
			ReadOnly: t.spec.Needs.Workspace != abi.AccessReadWrite}}
	}
	for _, m := range t.grant.Mounts {
		p.Mounts = append(p.Mounts, sandbox.Mount{HostPath: m.Host, GuestPath: m.Guest, ReadOnly: true})
	}
	if len(t.spec.Needs.Env) > 0 {
		p.Env = map[string]string{}
		for _, name := range t.spec.Needs.Env {
			if v, ok := os.LookupEnv(name); ok {
				p.Env[name] = v
			}
		}
	}
	return p
}

// overriddenBy returns l with the non-zero fields of o.
func (l Limits) overriddenBy(o Limits) Limits {
	if o.Memory != 0 {
		l.Memory = o.Memory
	}
	if o.Timeout != 0 {
		l.Timeout = o.Timeout
	}
	if o.Output != 0 {
		l.Output = o.Output
	}
	if o.Stderr != 0 {
		l.Stderr = o.Stderr
	}
	if o.Stdin != 0 {
		l.Stdin = o.Stdin
	}
	if o.Files != 0 {
		l.Files = o.Files
	}
	if o.Staging != 0 {
		l.Staging = o.Staging
	}
	if o.StagedPaths != 0 {
		l.StagedPaths = o.StagedPaths
	}
	return l
}

func toolNames(m abi.Manifest) []string {
	names := make([]string, len(m.Tools))
	for i, t := range m.Tools {
		names[i] = t.Name
	}
	return names
}

// NoToolError: a tool that an agent file's only: names is not one of its
// module's tools. Tools are the module's, for a caller that names the
// tool in words of its own (a workflow's tool step).
type NoToolError struct {
	Tool  string
	Tools []string
}

func (e *NoToolError) Error() string {
	return fmt.Sprintf("only: the module has no tool %q (it has %s)", e.Tool, strings.Join(e.Tools, ", "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readManifest reads a module's manifest without running it.
func readManifest(wasm []byte) (abi.Manifest, error) {
	m, err := abi.ReadManifest(wasm)
	if errors.Is(err, abi.ErrNoManifest) {
		return m, fmt.Errorf("%w; write one with `cairn tools pack MODULE.wasm`", err)
	}
	return m, err
}
