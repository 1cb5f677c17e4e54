package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox/overlay"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// suiteDir holds the wasi-testsuite's prebuilt wasm32-wasip1 tests (see its
// SOURCE.md).
const suiteDir = "testdata/wasi-testsuite/tests"

// refusedByDesign are the suite's tests cairn fails on purpose, each with
// the reason; docs/wasi.md says the same. Every other test must pass but
// those of inWazeroWASI, and a test listed in either that passes fails
// TestWASIConformance too, so the lists stay exact.
var refusedByDesign = map[string]string{
	"c/sock_shutdown-invalid_fd": sockets,
	"c/sock_shutdown-not_sock":   sockets,
	"rust/nofollow_errors":       symlinks,
	"rust/path_exists":           symlinks,
	"rust/readlink":              symlinks,
	"rust/symlink_create":        symlinks,
	"rust/symlink_filestat":      symlinks,
	"rust/path_link":             "makes hard links: a guest cannot make a hard link (EPERM), which could give a file a name outside the mount's rules",
}

const (
	sockets  = "imports sock_shutdown: a module importing a socket function does not run"
	symlinks = "makes symlinks: a guest cannot make a symlink (EPERM), which is how wazero's own directory mounts are escaped"
)

// refusedOnOverlays are the tests that fail by design on an overlay (the
// workspace of an agent's tool) though they pass on a plain mount.
var refusedOnOverlays = map[string]string{
	"rust/fd_filestat_set": fileTimes,
}

const fileTimes = "sets file times: on an overlay times are not effects, and a changed file gets the time its change is applied"

// inWazeroWASI are the tests that fail in wazero's WASI preview 1 layer,
// which cairn uses as it is (but the functions instantiateWASI replaces),
// above its own filesystem: plain wazero fails them too.
var inWazeroWASI = map[string]string{}

// wasiTest is one test of the suite: its module and what its .json asks.
type wasiTest struct {
	name, wasm, dir string            // dir: where the .wasm is, for its root
	Args            []string          `json:"args"`
	Env             map[string]string `json:"env"`
	Root            string            `json:"root"`
	ExitCode        uint32            `json:"exit_code"`
	Stdout          *string           `json:"stdout"`
}

// loadSuite reads every test of the suite, in name order.
func loadSuite(t testing.TB) []wasiTest {
	paths, err := filepath.Glob(filepath.Join(suiteDir, "*", "testsuite", "wasm32-wasip1", "*.wasm"))
	must(t, err)
	if len(paths) == 0 {
		t.Skipf("no wasi-testsuite in %s", suiteDir)
	}
	var out []wasiTest
	for _, p := range paths {
		wt := wasiTest{wasm: p, dir: filepath.Dir(p)}
		lang := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(p))))
		wt.name = lang + "/" + strings.TrimSuffix(filepath.Base(p), ".wasm")
		if b, err := os.ReadFile(strings.TrimSuffix(p, ".wasm") + ".json"); err == nil {
			must(t, json.Unmarshal(b, &wt))
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		out = append(out, wt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// check says how a run differs from what the test expects, or "".
func (wt wasiTest) check(code uint32, stdout string, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case code != wt.ExitCode:
		return fmt.Sprintf("exit %d, want %d", code, wt.ExitCode)
	case wt.Stdout != nil && stdout != *wt.Stdout:
		return fmt.Sprintf("stdout %q, want %q", stdout, *wt.Stdout)
	}
	return ""
}

// rootCopy is a fresh, writable copy of the test's root directory, or ""
// when it has none.
func (wt wasiTest) rootCopy(t testing.TB) string {
	if wt.Root == "" {
		return ""
	}
	dst := filepath.Join(t.TempDir(), "root")
	must(t, copyTree(filepath.Join(wt.dir, wt.Root), dst))
	return dst
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
}

// runCairn runs the test the way `cairn exec --dir ROOT:/` does, or, with
// overlay, with ROOT behind an overlay, as an agent's tool sees its
// workspace.
func (wt wasiTest) runCairn(t testing.TB, rt *Runtime, onOverlay bool) string {
	wasm, err := os.ReadFile(wt.wasm)
	must(t, err)
	p := Policy{Args: wt.Args, Env: wt.Env, Timeout: time.Minute,
		StdinLimit: math.MaxInt64, StdoutLimit: math.MaxInt64, StderrLimit: math.MaxInt64}
	if root := wt.rootCopy(t); root != "" {
		p.Mounts = []Mount{{HostPath: root, GuestPath: "/"}}
		if onOverlay {
			ov, err := overlay.New(root, filepath.Join(t.TempDir(), "staging"))
			must(t, err)
			defer ov.Close()
			p.Mounts[0] = Mount{GuestPath: "/", Overlay: ov}
		}
	}
	var stdout, stderr bytes.Buffer
	ex, err := rt.Exec(context.Background(), wasm, p, bytes.NewReader(nil), &stdout, &stderr)
	return withStderr(wt.check(ex.Code, stdout.String(), err), stderr.String())
}

// runWazero runs the test under plain wazero, configured as its CLI
// (`wazero run -mount=ROOT:/`) is: real clocks and randomness.
func (wt wasiTest) runWazero(t testing.TB, cache wazero.CompilationCache) string {
	wasm, err := os.ReadFile(wt.wasm)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var stdout, stderr bytes.Buffer
	fsc := wazero.NewFSConfig()
	if root := wt.rootCopy(t); root != "" {
		fsc = fsc.WithDirMount(root, "/")
	}
	cfg := wazero.NewModuleConfig().WithArgs(append([]string{filepath.Base(wt.wasm)}, wt.Args...)...).
		WithStdin(bytes.NewReader(nil)).WithStdout(&stdout).WithStderr(&stderr).WithFSConfig(fsc).
		WithSysWalltime().WithSysNanotime().WithSysNanosleep().WithRandSource(rand.Reader)
	for k, v := range wt.Env {
		cfg = cfg.WithEnv(k, v)
	}
	_, err = rt.InstantiateWithConfig(ctx, wasm, cfg)
	var code uint32
	var exitErr *sys.ExitError
	if errors.As(err, &exitErr) {
		code, err = exitErr.ExitCode(), nil
	}
	return withStderr(wt.check(code, stdout.String(), err), stderr.String())
}

func withStderr(failure, stderr string) string {
	if failure == "" || stderr == "" {
		return failure
	}
	if len(stderr) > 600 {
		stderr = "..." + stderr[len(stderr)-600:]
	}
	return failure + "; stderr: " + strings.TrimSpace(stderr)
}

// The public WASI testsuite passes under cairn's sandbox, run as `cairn
// exec` runs a module, but for the tests refused by design; every test
// plain wazero passes, cairn passes too, unless it is so refused. On an
// overlay, as an agent's tool runs, the same tests pass but those refused
// on overlays.
func TestWASIConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every test of the WASI testsuite twice")
	}
	tests := loadSuite(t)
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{})
	must(t, err)
	defer rt.Close(ctx)
	cache := wazero.NewCompilationCache()
	defer cache.Close(ctx)
	var ours, theirs []string
	onOverlays := 0
	for _, wt := range tests {
		t.Run(wt.name, func(t *testing.T) {
			cairnFail, wazeroFail := wt.runCairn(t, rt, false), wt.runWazero(t, cache)
			overlayFail := wt.runCairn(t, rt, true)
			if cairnFail == "" {
				ours = append(ours, wt.name)
			}
			if wazeroFail == "" {
				theirs = append(theirs, wt.name)
			}
			reason, listed := refusedByDesign[wt.name]
			if r, ok := inWazeroWASI[wt.name]; ok {
				reason, listed = "fails in wazero's WASI layer: "+r, true
			}
			switch {
			case listed && cairnFail == "":
				t.Errorf("passes, but is listed as failing (%s): take it off the list", reason)
			case !listed && cairnFail != "":
				t.Errorf("fails under cairn: %s (under plain wazero: %s)", cairnFail, orPass(wazeroFail))
			case listed:
				t.Logf("fails as listed (%s): %s", reason, cairnFail)
			}
			onOverlay, refused := refusedOnOverlays[wt.name]
			switch {
			case refused && overlayFail == "":
				t.Errorf("passes on an overlay, but is listed as refused there (%s): take it off the list", onOverlay)
			case refused && cairnFail != "":
				t.Errorf("is listed as refused on overlays only, and fails on a plain mount too: %s", cairnFail)
			case !refused && (cairnFail == "") != (overlayFail == ""):
				t.Errorf("on a plain mount: %s; on an overlay: %s", orPass(cairnFail), orPass(overlayFail))
			}
			if overlayFail == "" {
				onOverlays++
			}
		})
	}
	t.Logf("cairn passes %d of %d (on an overlay %d), plain wazero %d", len(ours), len(tests), onOverlays, len(theirs))
	var onlyOurs, onlyTheirs []string
	for _, name := range ours {
		if !slices.Contains(theirs, name) {
			onlyOurs = append(onlyOurs, name)
		}
	}
	for _, name := range theirs {
		if !slices.Contains(ours, name) {
			onlyTheirs = append(onlyTheirs, name)
			if _, ok := refusedByDesign[name]; !ok {
				t.Errorf("%s passes under plain wazero and not under cairn", name)
			}
		}
	}
	t.Logf("only under cairn: %v; only under plain wazero: %v", onlyOurs, onlyTheirs)
}

func orPass(failure string) string {
	if failure == "" {
		return "passes"
	}
	return failure
}
