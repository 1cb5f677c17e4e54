package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/cairnrun/cairn/abi"
)

// Pack returns wasm with its manifest written into the module's
// cairn.manifest section. With manifestJSON nil, the manifest is asked of the
// module itself: it runs once, in the sandbox with nothing mounted, with the
// argument --cairn-manifest (the guest package answers it). That is the
// only time cairn runs a module to learn about it; listing tools reads the
// section and runs nothing.
//
// # Errors
//
// A module that does not compile, a manifest that does not decode or
// validate, a module that fails to describe itself.
func (e *Engine) Pack(ctx context.Context, wasm, manifestJSON []byte) ([]byte, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	m, err := e.describe(ctx, wasm, manifestJSON)
	if err != nil {
		return nil, err
	}
	if err := objectInputs(m); err != nil {
		return nil, err
	}
	return abi.WithManifest(wasm, m)
}

// objectInputs refuses a manifest whose tool's input schema is of a type
// other than object: OpenAI and Anthropic accept only object schemas for a tool's
// input, so such a tool would load, and run with the script model, and
// fail only when a real model is asked. (A Go tool's input is a struct:
// guest.Define of a string or a number gives such a schema.)
func objectInputs(m abi.Manifest) error {
	for _, t := range m.Tools {
		var schema struct {
			Type any `json:"type"`
		}
		if t.InputSchema == "" {
			continue
		}
		if err := json.Unmarshal([]byte(t.InputSchema), &schema); err != nil {
			return fmt.Errorf("tool %q: its input schema is not a JSON object: %w", t.Name, err)
		}
		if schema.Type != nil && schema.Type != "object" {
			return fmt.Errorf("tool %q: its input schema is of type %v, where models take only an object: make its input a struct with a field", t.Name, schema.Type)
		}
	}
	return nil
}

func (e *Engine) describe(ctx context.Context, wasm, manifestJSON []byte) (abi.Manifest, error) {
	var m abi.Manifest
	if manifestJSON != nil {
		if err := json.Unmarshal(manifestJSON, &m); err != nil {
			return m, fmt.Errorf("read manifest JSON: %w", err)
		}
		return m, m.Validate()
	}
	mod, err := e.rt.Compile(ctx, wasm)
	if err != nil {
		return m, err
	}
	m, err = mod.Describe(ctx)
	if err != nil {
		return m, fmt.Errorf("ask the module for its manifest: %w", err)
	}
	return m, nil
}

// ToolInfo is one tool as `cairn tools ls` shows it.
type ToolInfo struct {
	Module string   `json:"module"`
	Tool   abi.Tool `json:"tool"`
}

// ListTools lists the tools an agent file gives its agent: those of the
// modules it names (as their only: lists narrow them), read from their
// manifests without running them, an entry for each MCP server, and the
// tools the host carries out.
func ListTools(af *AgentFile) ([]ToolInfo, error) {
	if af == nil {
		return nil, errors.New("list tools: the agent file is nil; load one with host.LoadAgentFile")
	}
	mods, err := loadModules(af)
	if err != nil {
		return nil, err
	}
	var out []ToolInfo
	for _, m := range mods {
		for _, t := range m.Manifest.Tools {
			if len(m.Ref.Only) > 0 && !slices.Contains(m.Ref.Only, t.Name) {
				continue // not the agent's: its only: leaves it out
			}
			out = append(out, ToolInfo{Module: m.Ref.Module, Tool: t})
		}
	}
	for _, s := range af.MCP {
		out = append(out, serverInfo(s))
	}
	natives, err := nativeInfo(af)
	return append(out, natives...), err
}

// ModuleTools lists the tools of one module's bytes without running it;
// BuiltinModule names the built-in tools.
func ModuleTools(name string, wasm []byte) ([]ToolInfo, error) {
	if embedded, ok := embeddedWasm(name); ok {
		wasm = embedded
	}
	m, err := readManifest(wasm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]ToolInfo, len(m.Tools))
	for i, t := range m.Tools {
		out[i] = ToolInfo{Module: name, Tool: t}
	}
	return out, nil
}
