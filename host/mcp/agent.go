package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/host"
)

// ToolsAgent is the agent file of `cairn mcp --tools DIR…`: the built-in
// tools and every packed module (*.wasm) in the directories, each module
// granted the workspace access, clock and randomness its manifest asks
// for and nothing more (no environment variables, no other mounts). An
// agent file says more: finer grants, limits and approval rules.
//
// # Errors
//
// A directory that cannot be read, a module without a manifest.
func ToolsAgent(dirs []string) (*host.AgentFile, error) {
	refs := []map[string]any{{"module": host.BuiltinModule}}
	for _, dir := range dirs {
		mods, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("--tools %s: %w", dir, err)
		}
		sort.Strings(mods)
		for _, m := range mods {
			ref, err := moduleRef(m)
			if err != nil {
				return nil, err
			}
			refs = append(refs, ref)
		}
	}
	src, err := yaml.Marshal(map[string]any{"name": "mcp", "model": map[string]string{"provider": "script"}, "tools": refs})
	if err != nil {
		return nil, err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return host.ParseAgentFile(src, cwd)
}

// MadeByTools reports whether af is an agent file ToolsAgent made: the
// name mcp, the model of a session, and tools (modules and their grants),
// nothing else: no approval rules, prompt, limits or MCP servers. `cairn
// mcp --tools` may serve such an agent with other tools, since nothing of
// it is lost; an agent made with an agent file of its own keeps it.
func MadeByTools(af *host.AgentFile) bool {
	var doc map[string]any
	if af == nil || yaml.Unmarshal(af.Source, &doc) != nil || doc["name"] != "mcp" || !onlyKeys(doc, "name", "model", "tools") {
		return false
	}
	if m, ok := doc["model"].(map[string]any); !ok || m["provider"] != "script" || !onlyKeys(m, "provider") {
		return false
	}
	tools, ok := doc["tools"].([]any)
	for _, t := range tools {
		if ref, isMap := t.(map[string]any); !isMap || !onlyKeys(ref, "module", "grant") {
			return false
		}
	}
	return ok
}

// onlyKeys reports whether m has no key but those named.
func onlyKeys(m map[string]any, keys ...string) bool {
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

// moduleRef is the agent file's entry of one module: its absolute path
// and the grant its manifest asks for.
func moduleRef(path string) (map[string]any, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	wasm, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("tool module %s: %w", path, err)
	}
	m, err := abi.ReadManifest(wasm)
	if err != nil {
		return nil, fmt.Errorf("tool module %s: %w; write one with `cairn tools pack`", path, err)
	}
	grant := map[string]any{}
	var access abi.Access
	for _, t := range m.Tools {
		if t.Needs.Workspace == abi.AccessReadWrite || access == abi.AccessNone {
			access = t.Needs.Workspace
		}
		if t.Needs.Clock {
			grant["clock"] = true
		}
		if t.Needs.Random {
			grant["random"] = true
		}
		if len(t.Needs.Env) > 0 {
			return nil, fmt.Errorf("tool module %s: tool %s asks for environment variables (%s); grant them in an agent file and serve it with -f",
				path, t.Name, strings.Join(t.Needs.Env, ", "))
		}
	}
	if access != abi.AccessNone {
		grant["workspace"] = string(access)
	}
	return map[string]any{"module": abs, "grant": grant}, nil
}
