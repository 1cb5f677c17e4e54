package guestbuild

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Build builds the module, hands its bytes to pack and writes what pack
// returns beside it.
func TestBuildPacks(t *testing.T) {
	dir := t.TempDir()
	var built []byte
	out, err := Build(dir, "../../host/testdata/hostile", func(wasm []byte) ([]byte, error) {
		built = wasm
		return append([]byte("packed:"), wasm...), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out != filepath.Join(dir, "hostile.wasm") {
		t.Errorf("packed module at %s, want %s", out, filepath.Join(dir, "hostile.wasm"))
	}
	if !bytes.HasPrefix(built, []byte("\x00asm")) {
		t.Fatalf("pack was given %d bytes that are not a wasm module", len(built))
	}
	got, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(got, append([]byte("packed:"), built...)) {
		t.Fatalf("the packed module is not what pack returned: %v", err)
	}
}

// A package that does not build, and a pack that fails, are errors that
// name the package.
func TestBuildErrors(t *testing.T) {
	ok := func(w []byte) ([]byte, error) { return w, nil }
	if _, err := Build(t.TempDir(), "./no/such/package", ok); err == nil || !strings.Contains(err.Error(), "build ./no/such/package") {
		t.Errorf("build of a missing package: %v", err)
	}
	refuse := errors.New("no manifest")
	_, err := Build(t.TempDir(), "../../host/testdata/hostile", func([]byte) ([]byte, error) { return nil, refuse })
	if !errors.Is(err, refuse) || !strings.Contains(err.Error(), "pack ../../host/testdata/hostile") {
		t.Errorf("a pack that fails: %v", err)
	}
}
