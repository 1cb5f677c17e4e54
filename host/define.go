package host

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"

	"github.com/cairnrun/cairn/checkpoint"
)

// define keeps what an agent is made of in the store — its agent file, its
// modules and its script, by content — and returns the definition that
// names them. Resume rebuilds the agent from it, on any machine that has
// the store.
func (e *Engine) define(af *AgentFile, mods []toolModule, ws string) (checkpoint.Definition, error) {
	return e.defineWith(af, mods, ws, nil)
}

// defineWith is define, writing the modules the store lacks in the
// background with later, when it is not nil (see blobWrites).
func (e *Engine) defineWith(af *AgentFile, mods []toolModule, ws string, later *blobWrites) (checkpoint.Definition, error) {
	def := checkpoint.Definition{AgentPath: af.File, AgentDir: af.Dir, Workspace: ws, Modules: map[string]string{}}
	var err error
	if def.AgentFile, err = e.store.PutBlob(af.Source); err != nil {
		return def, err
	}
	for _, m := range mods {
		if def.Modules[m.Ref.Module], err = e.keepModule(m, later); err != nil {
			return def, err
		}
	}
	if af.Model.Provider == "script" && af.Model.Script != "" {
		script, err := os.ReadFile(af.resolve(af.Model.Script))
		if err != nil {
			return def, af.modelError(err)
		}
		if def.Script, err = e.store.PutBlob(script); err != nil {
			return def, err
		}
	}
	if af.Model.Provider == "script" && af.Model.Script == "" && af.Model.ScriptData != nil {
		// A script given as bytes (a workflow's tool step) is kept the same way.
		if def.Script, err = e.store.PutBlob(af.Model.ScriptData); err != nil {
			return def, err
		}
	}
	return def, nil
}

// ErrDefinition: what an agent was made of is missing from the store.
var ErrDefinition = errors.New("agent definition is incomplete")

// rebuild reads an agent back from its definition: the agent file, each
// module and the script exactly as they were when the agent started.
func (e *Engine) rebuild(def checkpoint.Definition) (*AgentFile, []toolModule, error) {
	src, err := e.store.Blob(def.AgentFile)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: agent file: %w", ErrDefinition, err)
	}
	af, err := parseStored(src, def.AgentDir)
	if err != nil {
		return nil, nil, fmt.Errorf("stored agent file: %w", err)
	}
	af.File = def.AgentPath
	if def.Script != "" {
		if af.Model.ScriptData, err = e.store.Blob(def.Script); err != nil {
			return nil, nil, fmt.Errorf("%w: script: %w", ErrDefinition, err)
		}
	}
	mods := make([]toolModule, 0, len(af.Tools))
	for _, ref := range af.Tools {
		digest, ok := def.Modules[ref.Module]
		if !ok {
			return nil, nil, fmt.Errorf("%w: module %s is not in the store", ErrDefinition, ref.Module)
		}
		wasm, damaged, err := e.moduleBlob(af, ref, digest)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: module %s: %w", ErrDefinition, ref.Module, err)
		}
		m, err := moduleOf(ref, wasm)
		if err != nil {
			return nil, nil, err
		}
		if m.damaged = damaged; damaged {
			m.note = fmt.Sprintf("tool module %s: its blob %s in the store is damaged (its content does not match its digest); "+
				"this run uses the same bytes from %s, and a run or resume that writes the agent stores them again", ref.Module, digest, m.source())
		}
		mods = append(mods, m)
	}
	return af, mods, nil
}

// changedSince says how the files an agent was made of differ on disk now
// from what the store kept, in words for a warning; "" when they do not.
// A changed file gets upgradeAdvice (or the --upgrade that takes it up),
// a file gone none: there is nothing new to take up.
func (e *Engine) changedSince(def checkpoint.Definition, upgradeAdvice string) string {
	if def.AgentPath == "" {
		return ""
	}
	now, err := os.ReadFile(def.AgentPath)
	if err != nil {
		return fmt.Sprintf("the agent file %s is gone (%v); resuming with the one the agent started with", def.AgentPath, err)
	}
	kept, err := e.store.Blob(def.AgentFile)
	if err == nil && !bytes.Equal(now, kept) {
		return fmt.Sprintf("the agent file %s changed since the agent started; resuming with the one the agent started with (%s)",
			def.AgentPath, cmp.Or(upgradeAdvice, "--upgrade uses the new one"))
	}
	return ""
}
