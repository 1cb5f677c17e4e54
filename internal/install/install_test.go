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

// README's install command works: `go install MODULE/cmd/cairn@VERSION`
// from a module proxy that serves this checkout as a version (a file
// proxy made here; the dependencies come from the module cache, so no
// network is used), with CGO_ENABLED=0, gives a static cairn that runs.
func TestGoInstallFromModuleProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cairn from a module proxy")
	}
	proxy, bin := t.TempDir(), t.TempDir()
	serveModule(t, proxy, "v0.0.1")
	env := []string{"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download")),
		"GOSUMDB=off", "GOBIN=" + bin, "CGO_ENABLED=0"}
	gocmd.Run(t, t.TempDir(), env, "install", modulePath+"/cmd/cairn@v0.0.1")

	cairnBin := filepath.Join(bin, "cairn")
	out, err := exec.Command(cairnBin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "tool ABI") {
		t.Fatalf("the installed cairn: %v\n%s", err, out)
	}
	info := gocmd.Run(t, ".", nil, "version", "-m", cairnBin)
	for _, want := range []string{"path\t" + modulePath + "/cmd/cairn", "mod\t" + modulePath + "\tv0.0.1", "CGO_ENABLED=0"} {
		if !strings.Contains(info, want) {
			t.Errorf("go version -m lacks %q:\n%s", want, info)
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

	ls := exec.Command("git", "ls-files", "-z")
	ls.Dir = root
	files, err := ls.Output()
	if err != nil {
		t.Skipf("the checkout's files (git ls-files): %v", err)
	}
	f, err := os.Create(filepath.Join(at, v+".zip"))
	must(t, err)
	z := zip.NewWriter(f)
	for _, name := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
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
