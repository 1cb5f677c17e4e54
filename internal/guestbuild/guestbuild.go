// Package guestbuild builds the Go tools that tests run in the sandbox:
// go build for wasip1, then the module's manifest packed in by the
// caller's engine, as `cairn tools pack` does. It runs the go command on
// PATH, so the packages it builds are named as go build takes them
// (relative to the test's directory, or by import path).
package guestbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
)

// PackFunc packs a built module's manifest into it (host.Engine.Pack with
// no grants).
type PackFunc func(wasm []byte) ([]byte, error)

// Build builds the Go program pkg for wasip1 into dir, packs it with
// pack, and returns the packed module's path: dir/NAME.wasm, NAME the
// package's last element.
//
// # Errors
//
// A failed build, with the go command's output; pack's error.
func Build(dir, pkg string, pack PackFunc) (string, error) {
	name := path.Base(filepath.ToSlash(pkg))
	raw := filepath.Join(dir, name+".raw.wasm")
	cmd := exec.Command("go", "build", "-o", raw, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", pkg, err, out)
	}
	wasm, err := os.ReadFile(raw)
	if err != nil {
		return "", err
	}
	packed, err := pack(wasm)
	if err != nil {
		return "", fmt.Errorf("pack %s: %w", pkg, err)
	}
	out := filepath.Join(dir, name+".wasm")
	return out, os.WriteFile(out, packed, 0o644)
}
