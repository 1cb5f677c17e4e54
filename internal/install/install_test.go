package install

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/internal/gocmd"
)

const modulePath = "github.com/cairnrun/cairn"

// repoRoot is the checkout this test runs in.
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs("../..")
	must(t, err)
	return root
}

// goEnv is the value of one of the go command's settings.
func goEnv(t *testing.T, name string) string {
	return strings.TrimSpace(gocmd.Run(t, ".", nil, "env", name))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// README's install command works as written (and docs/cli.md's, the
// same line): `CGO_ENABLED=0 go install MODULE/cmd/cairn@latest`, run by
// a shell, from a module proxy that serves this checkout as its only
// version (a file proxy made here; the dependencies come from the module
// cache, so no network is used), gives a static cairn that runs.
func TestGoInstallFromModuleProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cairn from a module proxy")
	}
	lines := readmeGoLines(t, "go install ")
	if len(lines) == 0 {
		t.Fatal("README shows no go install command; the reader lost it")
	}
	proxy := t.TempDir()
	serveModule(t, proxy, "v0.0.1")
	for _, line := range lines {
		bin := t.TempDir()
		env := []string{"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download")),
			"GOSUMDB=off", "GOBIN=" + bin}
		runLine(t, t.TempDir(), env, line)
		checkStatic(t, filepath.Join(bin, "cairn"), "mod\t"+modulePath+"\tv0.0.1")
	}
}

// README's build command works as written (and docs/cli.md's, the same
// line): `CGO_ENABLED=0 go build -o cairn ./cmd/cairn`, run by a shell in
// a copy of the checkout's files, leaves a static cairn there that runs.
func TestGoBuildInTheCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cairn")
	}
	lines := readmeGoLines(t, "go build ")
	if len(lines) == 0 {
		t.Fatal("README shows no go build command; the reader lost it")
	}
	checkout := t.TempDir()
	copyCheckout(t, checkout)
	for _, line := range lines {
		out := filepath.Join(checkout, "cairn")
		os.Remove(out)
		runLine(t, checkout, nil, line)
		checkStatic(t, out, "path\t"+modulePath+"/cmd/cairn")
	}
}

// readmeGoLines returns the distinct lines of README's and docs/cli.md's
// code blocks whose command, after its variables, starts with prefix.
func readmeGoLines(t *testing.T, prefix string) []string {
	seen := map[string]bool{}
	var lines []string
	for _, page := range []string{"../../README.md", "../../docs/cli.md"} {
		for _, line := range codeLines(t, page) {
			cmd := line
			for strings.Contains(strings.SplitN(cmd, " ", 2)[0], "=") {
				_, cmd, _ = strings.Cut(cmd, " ")
			}
			if strings.HasPrefix(cmd, prefix) && !seen[line] {
				seen[line] = true
				lines = append(lines, line)
			}
		}
	}
	return lines
}

// runLine runs a command line as written, by sh, in dir, with env added
// to the environment as gocmd adds it.
func runLine(t *testing.T, dir string, env []string, line string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS="}, env...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("`%s`: %v\n%s", line, err, out)
	}
}

// checkStatic fails the test unless the cairn at path runs, was built
// without cgo, and its build information has want.
func checkStatic(t *testing.T, path, want string) {
	t.Helper()
	out, err := exec.Command(path, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "tool ABI") {
		t.Fatalf("%s version: %v\n%s", path, err, out)
	}
	info := gocmd.Run(t, ".", nil, "version", "-m", path)
	for _, w := range []string{want, "CGO_ENABLED=0"} {
		if !strings.Contains(info, w) {
			t.Errorf("go version -m %s lacks %q:\n%s", path, w, info)
		}
	}
}

// serveModule lays the checkout's tracked files out in dir as a module
// proxy serves version v: list, .info, .mod and .zip.
func serveModule(t *testing.T, dir, v string) {
	root := repoRoot(t)
	at := filepath.Join(dir, modulePath, "@v")
	must(t, os.MkdirAll(at, 0o755))
	must(t, os.WriteFile(filepath.Join(at, "list"), []byte(v+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(at, v+".info"), []byte(`{"Version":"`+v+`","Time":"2026-01-01T00:00:00Z"}`), 0o644))
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(at, v+".mod"), mod, 0o644))

	f, err := os.Create(filepath.Join(at, v+".zip"))
	must(t, err)
	z := zip.NewWriter(f)
	for _, name := range trackedFiles(t) {
		b, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		must(t, err)
		w, err := z.Create(modulePath + "@" + v + "/" + name)
		must(t, err)
		_, err = w.Write(b)
		must(t, err)
	}
	must(t, z.Close())
	must(t, f.Close())
}

// trackedFiles are the checkout's files as git tracks them, by their
// paths in the checkout.
func trackedFiles(t *testing.T) []string {
	ls := exec.Command("git", "ls-files", "-z")
	ls.Dir = repoRoot(t)
	files, err := ls.Output()
	if err != nil {
		t.Skipf("the checkout's files (git ls-files): %v", err)
	}
	return strings.Split(strings.TrimRight(string(files), "\x00"), "\x00")
}

// copyCheckout copies the checkout's tracked files, as the work tree has
// them, into dir.
func copyCheckout(t *testing.T, dir string) {
	root := repoRoot(t)
	for _, name := range trackedFiles(t) {
		b, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		must(t, err)
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
}
