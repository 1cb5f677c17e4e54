// Package pack builds a Go tool for WASI and writes its manifest into it,
// reproducibly: the same repository and Go version give the same bytes. The
// generators of the committed modules use it (go generate), and with check
// set it verifies a committed module instead of writing it (CI does that).
// A module built otherwise (the built-in tools, in C) is packed with
// Prebuilt.
package pack

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/cairnrun/cairn/abi"
)

// Build builds the package pkg (a path go build accepts) for wasip1 as a
// command module, packs manifest into it and writes it to out. With check,
// it writes nothing and fails if out differs from what it built.
func Build(pkg, out string, manifest abi.Manifest, check bool) error {
	return build(pkg, out, manifest, check, "exe")
}

// BuildReactor is Build for a module in the fast mode (see abi, "The fast
// mode"): pkg is built with -buildmode=c-shared, and its main package
// registers its tools with guest.Export.
func BuildReactor(pkg, out string, manifest abi.Manifest, check bool) error {
	return build(pkg, out, manifest, check, "c-shared")
}

func build(pkg, out string, manifest abi.Manifest, check bool, mode string) error {
	tmp, err := os.MkdirTemp("", "cairn-pack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	raw := filepath.Join(tmp, "module.wasm")
	cmd := exec.Command("go", "build", "-buildmode="+mode, "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", raw, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %w", pkg, err)
	}
	wasm, err := os.ReadFile(raw)
	if err != nil {
		return err
	}
	if err := Prebuilt(wasm, out, manifest, check); err != nil {
		return fmt.Errorf("pack %s: %w", pkg, err)
	}
	return nil
}

// Prebuilt packs manifest into wasm, a module built already, and writes it
// to out; with check, it writes nothing and fails if out differs.
func Prebuilt(wasm []byte, out string, manifest abi.Manifest, check bool) error {
	packed, err := abi.WithManifest(wasm, manifest)
	if err != nil {
		return err
	}
	if !check {
		return os.WriteFile(out, packed, 0o644)
	}
	committed, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	if !bytes.Equal(committed, packed) {
		return fmt.Errorf("%s is not what the repository builds (%d bytes committed, %d built): run go generate and commit it", out, len(committed), len(packed))
	}
	return nil
}
