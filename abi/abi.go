package abi

import (
	"errors"
	"fmt"
)

// Version is the ABI version this package describes.
const Version = 1

// ManifestSection is the name of the wasm custom section holding the Manifest.
const ManifestSection = "cairn.manifest"

// ManifestFlag is the argument that asks a guest built with cairn's guest
// package to print its manifest instead of serving a call.
const ManifestFlag = "--cairn-manifest"

// WorkspaceDir is the guest path where the host mounts the workspace.
const WorkspaceDir = "/workspace"

// Request is what the host writes to a module's stdin for one call.
type Request struct {
	ABI       int    `cbor:"abi" json:"abi"`
	Tool      string `cbor:"tool" json:"tool"`
	CallID    string `cbor:"call_id" json:"call_id"`
	Input     string `cbor:"input" json:"input"`
	Workspace string `cbor:"workspace" json:"workspace"`
}

// Response is what a module writes to stdout for one call.
type Response struct {
	ABI    int    `cbor:"abi" json:"abi"`
	Output string `cbor:"output" json:"output"`
	Error  string `cbor:"error,omitempty" json:"error,omitempty"`
}

// Manifest is what a module says about itself, kept in its ManifestSection.
type Manifest struct {
	ABI   int    `cbor:"abi" json:"abi"`
	Tools []Tool `cbor:"tools" json:"tools"`
}

// Tool describes one tool of a module.
type Tool struct {
	Name        string `cbor:"name" json:"name"`
	Description string `cbor:"description" json:"description"`
	InputSchema string `cbor:"input_schema" json:"input_schema"`
	Mutates     bool   `cbor:"mutates" json:"mutates"`
	Idempotent  bool   `cbor:"idempotent" json:"idempotent"`
	Needs       Needs  `cbor:"needs" json:"needs"`
}

// Needs is what a tool asks of the sandbox. The zero value asks for nothing.
type Needs struct {
	Workspace Access   `cbor:"workspace" json:"workspace,omitempty"`
	Env       []string `cbor:"env,omitempty" json:"env,omitempty"`
	Clock     bool     `cbor:"clock,omitempty" json:"clock,omitempty"`
	Random    bool     `cbor:"random,omitempty" json:"random,omitempty"`
	// Net lists what the tool reaches through the network import, in the
	// form of a grant's allow entries ("api.example.com",
	// "*.example.org:443", "*"); each must be covered by the grant.
	Net []string `cbor:"net,omitempty" json:"net,omitempty"`
}

// Access is how a tool may use a directory.
type Access string

// The kinds of Access.
const (
	AccessNone      Access = ""
	AccessReadOnly  Access = "ro"
	AccessReadWrite Access = "rw"
)

// Covers reports whether granting a covers a need for b.
func (a Access) Covers(b Access) bool {
	switch b {
	case AccessNone:
		return true
	case AccessReadOnly:
		return a == AccessReadOnly || a == AccessReadWrite
	default:
		return a == AccessReadWrite
	}
}

// ErrNewerABI is returned for a message or manifest written for an ABI
// version newer than Version.
var ErrNewerABI = errors.New("built for a newer cairn ABI")

// Validate checks a manifest for what the host relies on: a known ABI
// version, at least one tool, well-formed unique names, known access kinds.
func (m *Manifest) Validate() error {
	if err := checkVersion(m.ABI); err != nil {
		return err
	}
	if len(m.Tools) == 0 {
		return errors.New("manifest lists no tools")
	}
	seen := make(map[string]bool, len(m.Tools))
	for _, t := range m.Tools {
		if !validToolName(t.Name) {
			return fmt.Errorf("tool name %q: want 1 to 64 of [a-z0-9_]", t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("tool %q is listed twice", t.Name)
		}
		seen[t.Name] = true
		switch t.Needs.Workspace {
		case AccessNone, AccessReadOnly, AccessReadWrite:
		default:
			return fmt.Errorf("tool %q: workspace access %q: want \"\", \"ro\" or \"rw\"", t.Name, t.Needs.Workspace)
		}
	}
	return nil
}

// Lookup returns the tool named name.
func (m *Manifest) Lookup(name string) (Tool, bool) {
	for _, t := range m.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// validToolName reports whether name is 1 to 64 of [a-z0-9_].
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for _, c := range []byte(name) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func checkVersion(v int) error {
	switch {
	case v > Version:
		return fmt.Errorf("ABI version %d, this host speaks %d: %w", v, Version, ErrNewerABI)
	case v < 1:
		return fmt.Errorf("ABI version %d is not valid (want 1 to %d)", v, Version)
	}
	return nil
}
