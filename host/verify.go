package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// VerifyOptions picks the calls Verify runs again: all of them, those of
// one round, or one call.
type VerifyOptions struct {
	// Round, when not zero, picks the calls of that round.
	Round int
	// Call, when set, picks the call of that id.
	Call string
}

// The statuses of a verified call.
const (
	// VerifyMatch: the call gave the same output and the same changes.
	VerifyMatch = "match"
	// VerifyDiverged: something differed; Divergences say what.
	VerifyDiverged = "diverged"
	// VerifyNondeterministic: something differed, but the call was
	// granted the host's clock or randomness, or read what is not
	// recorded (an extra mount, the environment), so it need not match.
	VerifyNondeterministic = "nondeterministic"
)

// VerifyReport is what Verify found.
type VerifyReport struct {
	Agent string         `json:"agent"`
	Calls []VerifiedCall `json:"calls"`
	// Diverged counts the calls whose status is VerifyDiverged.
	Diverged int `json:"diverged"`
	// Unrecorded counts the tool calls picked that have no recording:
	// calls that never ran in the sandbox (denied, refused before running,
	// MCP tools) or ran before recordings were kept.
	Unrecorded int `json:"unrecorded"`
}

// VerifiedCall is one call run again.
type VerifiedCall struct {
	Round  int    `json:"round"`
	Call   string `json:"call"`
	Tool   string `json:"tool"`
	Module string `json:"module"`
	Status string `json:"status"`
	// Divergences say what differed; empty for a match.
	Divergences []Divergence `json:"divergences,omitempty"`
	// Notes say why the call need not be deterministic.
	Notes []string `json:"notes,omitempty"`
}

// The kinds of a Divergence.
const (
	DivergeOutput = "output" // the call's answer differs
	DivergeEffect = "effect" // a change to one path differs
	DivergeFile   = "file"   // a file the call read is missing or damaged in the store
	DivergeModule = "module" // the module is missing or its bytes changed
	DivergePolicy = "policy" // the call would now run under another policy
	DivergeRun    = "run"    // the call could not be run again
	DivergeHTTP   = "http"   // a request differs from the recorded one, or a recorded response is missing or changed
)

// Divergence is one thing that differed between a call as recorded and
// as run again.
type Divergence struct {
	Kind     string `json:"kind"`
	Path     string `json:"path,omitempty"`
	Recorded string `json:"recorded,omitempty"`
	Replayed string `json:"replayed,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

func (d Divergence) String() string {
	s := d.Kind
	if d.Path != "" {
		s += " " + d.Path
	}
	if d.Detail != "" {
		s += ": " + d.Detail
	}
	switch {
	case d.Replayed == "" && d.Recorded != "":
		s += fmt.Sprintf(" (recorded %s)", d.Recorded)
	case d.Replayed != "":
		s += fmt.Sprintf(" (recorded %s, now %s)", orNone(d.Recorded), d.Replayed)
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// ErrNoSuchCall is returned by Verify when --round or --call pick no call
// the agent made.
var ErrNoSuchCall = errors.New("no such call")

// Verify runs an agent's recorded calls again, each in a fresh instance
// of the module it ran (by digest, from the store) under the same policy,
// on a workspace made of what the call saw (the files it read, from the
// store by content), with the same clock and randomness, and compares
// its output and its changes with the recorded ones, byte for byte. It
// changes nothing: not the agent, not its workspace.
//
// # Errors
//
// checkpoint.ErrNotFound for an unknown agent, ErrNoSuchCall when opts
// pick nothing, and the store's errors. A call that differs is not an
// error: it is in the report.
func (e *Engine) Verify(ctx context.Context, agent string, opts VerifyOptions) (*VerifyReport, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	rec, err := e.store.Read(agent)
	if err != nil {
		return nil, err
	}
	picked := pickCalls(rec.State, opts)
	if len(picked) == 0 {
		return nil, fmt.Errorf("%w: agent %q has no tool call %s", ErrNoSuchCall, agent, describeOpts(opts))
	}
	af, err := e.storedAgentFile(rec.State.Definition)
	if err != nil {
		return nil, err
	}
	report := &VerifyReport{Agent: agent}
	for _, p := range picked {
		if p.rec == nil {
			report.Unrecorded++
			continue
		}
		vc := e.verifyCall(ctx, af, rec.State.Definition.Workspace, p)
		if vc.Status == VerifyDiverged {
			report.Diverged++
		}
		report.Calls = append(report.Calls, vc)
	}
	return report, nil
}

func describeOpts(o VerifyOptions) string {
	switch {
	case o.Call != "" && o.Round != 0:
		return fmt.Sprintf("%q in round %d", o.Call, o.Round)
	case o.Call != "":
		return fmt.Sprintf("%q", o.Call)
	case o.Round != 0:
		return fmt.Sprintf("in round %d", o.Round)
	}
	return "recorded"
}

// pickedCall is one tool call of the agent's conversation and what it
// answered.
type pickedCall struct {
	call    conversation.ToolCall
	rec     *conversation.Recording
	net     []conversation.Exchange
	output  string
	isError bool
}

// pickCalls lists the committed tool calls opts pick, in order. A call
// with no recording has no round to pick it by: --round leaves it out.
func pickCalls(st *checkpoint.State, opts VerifyOptions) []pickedCall {
	calls := map[string]conversation.ToolCall{}
	var out []pickedCall
	for _, m := range st.Messages {
		for _, c := range m.ToolCalls {
			calls[c.ID] = c
		}
		if m.Role != conversation.RoleTool {
			continue
		}
		c, ok := calls[m.CallID]
		if !ok || (opts.Call != "" && opts.Call != c.ID) {
			continue
		}
		if opts.Round != 0 && (m.Recording == nil || m.Recording.Round != opts.Round) {
			continue
		}
		out = append(out, pickedCall{call: c, rec: m.Recording, net: m.Net, output: m.Text, isError: m.IsError})
	}
	return out
}

// storedAgentFile reads the agent file an agent was made with back from
// the store.
func (e *Engine) storedAgentFile(def checkpoint.Definition) (*AgentFile, error) {
	src, err := e.store.Blob(def.AgentFile)
	if err != nil {
		return nil, fmt.Errorf("%w: agent file: %w", ErrDefinition, err)
	}
	af, err := parseStored(src, def.AgentDir)
	if err != nil {
		return nil, fmt.Errorf("stored agent file: %w", err)
	}
	af.File = def.AgentPath
	return af, nil
}

// verifyCall runs one recorded call again and compares.
func (e *Engine) verifyCall(ctx context.Context, af *AgentFile, agentWS string, p pickedCall) VerifiedCall {
	vc := VerifiedCall{Round: p.rec.Round, Call: p.call.ID, Tool: p.call.Name, Module: p.rec.Module}
	vc.Notes = nondeterminism(p.rec)
	divs := e.replay(ctx, af, agentWS, p)
	vc.Divergences = divs
	switch {
	case len(divs) == 0:
		vc.Status = VerifyMatch
	case len(vc.Notes) > 0:
		vc.Status = VerifyNondeterministic
	default:
		vc.Status = VerifyDiverged
	}
	return vc
}

// nondeterminism says why a call need not give the same result twice.
func nondeterminism(rec *conversation.Recording) []string {
	var out []string
	if rec.RealClock {
		out = append(out, "it was granted the host's clock")
	}
	if rec.RealRandom {
		out = append(out, "it was granted the host's random source")
	}
	for _, o := range rec.Outside {
		out = append(out, "it could read "+o+", which is not recorded")
	}
	return out
}

// replay runs the call again in a workspace of its own and lists what
// differs.
func (e *Engine) replay(ctx context.Context, af *AgentFile, agentWS string, p pickedCall) []Divergence {
	ts, divs := e.recordedToolset(ctx, af, p)
	if ts == nil {
		return divs
	}
	dir, err := os.MkdirTemp("", "cairn-verify-")
	if err != nil {
		return append(divs, Divergence{Kind: DivergeRun, Detail: err.Error()})
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "workspace")
	divs = append(divs, e.materialize(ws, agentWS, p.rec.Files)...)
	t := ts.tools[p.call.Name]
	if d := policyDigest(t.policy(ws)); d != p.rec.Policy {
		divs = append(divs, Divergence{Kind: DivergePolicy, Recorded: p.rec.Policy, Replayed: d,
			Detail: "the agent file now grants or limits the module differently"})
	}
	net := &netReplay{store: e.store, recorded: p.net}
	view := workspaceView{dir: ws, net: replayNet(net), staging: func(call string) string {
		return filepath.Join(dir, "staging", unsafeName.ReplaceAllString(call, "_"))
	}}
	res := ts.runCall(ctx, view, p.call)
	divs = append(divs, net.finish()...)
	return append(divs, compareResult(p, res)...)
}

// recordedToolset binds the recorded module, by digest from the store,
// to the tool's entry of the agent file. A module missing or changed in
// the store is a divergence, and nothing runs.
func (e *Engine) recordedToolset(ctx context.Context, af *AgentFile, p pickedCall) (*toolset, []Divergence) {
	wasm, err := e.store.Blob(p.rec.Module)
	var corrupt *checkpoint.CorruptError
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		return nil, []Divergence{{Kind: DivergeModule, Recorded: p.rec.Module, Detail: "the module is not in the store"}}
	case errors.As(err, &corrupt):
		return nil, []Divergence{{Kind: DivergeModule, Recorded: p.rec.Module,
			Detail: "the module's bytes in the store changed; it was not run"}}
	case err != nil:
		return nil, []Divergence{{Kind: DivergeModule, Recorded: p.rec.Module, Detail: err.Error()}}
	}
	ref, ok := refFor(af, p.rec.Ref, p.call.Name)
	if !ok {
		return nil, []Divergence{{Kind: DivergeRun, Detail: fmt.Sprintf("the stored agent file has no module %s offering tool %s", p.rec.Ref, p.call.Name)}}
	}
	m, err := moduleOf(withoutSecrets(ref), wasm)
	if err == nil {
		var ts *toolset
		if ts, err = newToolset(ctx, e.rt, af, []toolModule{m}); err == nil {
			if _, ok := ts.tools[p.call.Name]; ok {
				return ts, nil
			}
			err = fmt.Errorf("the module offers no tool %s", p.call.Name)
		}
	}
	return nil, []Divergence{{Kind: DivergeRun, Detail: err.Error()}}
}

// refFor is the agent file's entry of module that offers tool.
func refFor(af *AgentFile, module, tool string) (ToolRef, bool) {
	for _, ref := range af.Tools {
		if ref.Module == module && (len(ref.Only) == 0 || contains(ref.Only, tool)) {
			return ref, true
		}
	}
	return ToolRef{}, false
}

// materialize makes the workspace a call saw: its directories, the files
// it read with their content (from the store when it was kept, else from
// the agent's workspace, agentWS, while that still holds it), and the
// files it only described or listed at their size (zeros: it never read
// them).
func (e *Engine) materialize(ws, agentWS string, files []conversation.SeenFile) []Divergence {
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return []Divergence{{Kind: DivergeRun, Detail: err.Error()}}
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return []Divergence{{Kind: DivergeRun, Detail: err.Error()}}
	}
	defer root.Close()
	var divs []Divergence
	for _, f := range files {
		if err := e.materializeOne(root, agentWS, f); err != nil {
			divs = append(divs, *err)
		}
	}
	return divs
}

// materializeOne makes one path of the workspace, through root, so that
// a recording whose paths were tampered with cannot reach outside it.
func (e *Engine) materializeOne(root *os.Root, agentWS string, f conversation.SeenFile) *Divergence {
	fail := func(err error) *Divergence { return &Divergence{Kind: DivergeRun, Path: f.Path, Detail: err.Error()} }
	if !validRecordedPath(f.Path) {
		return &Divergence{Kind: DivergeFile, Path: f.Path, Detail: "the recording names a path outside the workspace; it is not made"}
	}
	if f.Dir {
		if err := root.MkdirAll(f.Path, 0o755); err != nil {
			return fail(err)
		}
		return nil
	}
	if dir := path.Dir(f.Path); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fail(err)
		}
	}
	data, div := e.contentOf(agentWS, f)
	if div != nil {
		return div
	}
	mode := f.Mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	file, err := root.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return fail(err)
	}
	defer file.Close()
	if _, err := file.Write(data); err != nil {
		return fail(err)
	}
	if f.Digest == "" && f.Size > 0 {
		if err := file.Truncate(f.Size); err != nil {
			return fail(err)
		}
	}
	return nil
}

// validRecordedPath reports whether p is a clean path inside a workspace.
func validRecordedPath(p string) bool {
	return p != "" && p != "." && path.Clean(p) == p && !path.IsAbs(p) && p != ".." && !strings.HasPrefix(p, "../")
}

// contentOf is the content a call read of f: from the store when it was
// kept, or when the store holds it anyway (the workspace's pasts keep
// every file the agent started with or wrote, see Timeline), else from
// the agent's workspace when the file there still has the digest
// recorded. Neither is a divergence of kind file.
func (e *Engine) contentOf(agentWS string, f conversation.SeenFile) ([]byte, *Divergence) {
	if f.Digest == "" {
		return nil, nil
	}
	if !f.Kept {
		if data, err := sizedBlob(e.store, f.Digest, f.Size); err == nil {
			return data, nil
		}
	}
	if f.Kept {
		data, err := sizedBlob(e.store, f.Digest, f.Size)
		if err != nil {
			return nil, &Divergence{Kind: DivergeFile, Path: f.Path, Recorded: f.Digest,
				Detail: "the content the call read is " + missingOrChanged(err) + "; the call ran again without the file"}
		}
		return data, nil
	}
	data, err := readInside(agentWS, f.Path)
	if err == nil && checkpoint.BlobDigest(data) == f.Digest {
		return data, nil
	}
	d := &Divergence{Kind: DivergeFile, Path: f.Path, Recorded: f.Digest,
		Detail: "the content the call read was not kept (the agent file's `record: reads` keeps it) and the workspace no longer holds it; the call ran again without the file"}
	if err == nil {
		d.Replayed = checkpoint.BlobDigest(data)
	}
	return nil, d
}

// readInside reads the file p of the directory dir, never outside it.
func readInside(dir, p string) ([]byte, error) {
	if dir == "" {
		return nil, errors.New("the agent has no workspace on record")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(p)
}

func missingOrChanged(err error) string {
	if errors.Is(err, checkpoint.ErrNotFound) {
		return "not in the store"
	}
	var corrupt *checkpoint.CorruptError
	if errors.As(err, &corrupt) {
		return "changed in the store (" + corrupt.Reason + ")"
	}
	return "unreadable: " + err.Error()
}

// compareResult lists what differs between the recorded call and res.
func compareResult(p pickedCall, res callResult) []Divergence {
	var divs []Divergence
	sum := sha256.Sum256([]byte(res.output))
	if sum != p.rec.Output || res.isError != p.rec.IsError {
		d := Divergence{Kind: DivergeOutput, Recorded: fmt.Sprintf("sha256:%x", p.rec.Output), Replayed: fmt.Sprintf("sha256:%x", sum)}
		d.Detail = "now: " + clip(res.output, 200)
		if res.isError != p.rec.IsError {
			d.Detail = fmt.Sprintf("error %t, now %t: %s", p.rec.IsError, res.isError, clip(res.output, 200))
		}
		divs = append(divs, d)
	}
	return append(divs, compareEffects(p.rec.Effects, res.effects)...)
}

// compareEffects lists, by path, the changes that differ.
func compareEffects(recorded []byte, now overlay.Effects) []Divergence {
	var was overlay.Effects
	if len(recorded) > 0 {
		var err error
		if was, err = overlay.DecodeEffects(recorded); err != nil {
			return []Divergence{{Kind: DivergeEffect, Detail: "the recorded changes do not decode: " + err.Error()}}
		}
	}
	byPath := map[string]overlay.Effect{}
	for _, e := range now {
		byPath[e.Path] = e
	}
	var divs []Divergence
	for _, e := range was {
		n, ok := byPath[e.Path]
		delete(byPath, e.Path)
		if !ok || n != e {
			divs = append(divs, Divergence{Kind: DivergeEffect, Path: e.Path, Recorded: describeEffect(e, true), Replayed: describeEffect(n, ok)})
		}
	}
	for _, n := range now {
		if _, ok := byPath[n.Path]; ok {
			divs = append(divs, Divergence{Kind: DivergeEffect, Path: n.Path, Replayed: describeEffect(n, true)})
		}
	}
	return divs
}

func describeEffect(e overlay.Effect, ok bool) string {
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s %s", e.Op, e.New)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
