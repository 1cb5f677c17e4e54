package sandbox

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// fsTree lays out the directory fsprog works on.
func fsTree(t *testing.T) string {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	for name, content := range map[string]string{"a.txt": "alpha\n", "sub/b.txt": "beta\n",
		"gone.txt": "to be removed\n", "log.txt": "first\n"} {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

// An ordinary program that lists, reads and writes files does the same
// under cairn's workspace filesystem as under wazero's own directory
// mount: the same output, the same exit status, the same files after.
func TestExecMatchesWazeroDirMount(t *testing.T) {
	ours, theirs := fsTree(t), fsTree(t)
	var got bytes.Buffer
	ex, err := testRT.Exec(context.Background(), guestBytes["fsprog"],
		Policy{Args: []string{"/data", "3"}, Mounts: []Mount{{HostPath: ours, GuestPath: "/data"}}},
		nil, &got, io.Discard)
	must(t, err)

	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var want bytes.Buffer
	cfg := wazero.NewModuleConfig().WithArgs("tool", "/data", "3").WithStdout(&want).
		WithFSConfig(wazero.NewFSConfig().WithDirMount(theirs, "/data"))
	_, err = rt.InstantiateWithConfig(ctx, guestBytes["fsprog"], cfg)
	wantCode := exitCode(t, err)

	if got.String() != want.String() || ex.Code != wantCode {
		t.Fatalf("under cairn (exit %d):\n%s\nunder wazero (exit %d):\n%s", ex.Code, got.String(), wantCode, want.String())
	}
	if a, b := treeOf(t, ours), treeOf(t, theirs); a != b {
		t.Fatalf("the directories differ after the runs:\ncairn:\n%s\nwazero:\n%s", a, b)
	}
	if ex.Code != 3 || got.Len() == 0 {
		t.Fatalf("exit %d, output %q: the program did not run to its end", ex.Code, got.String())
	}
}

func exitCode(t *testing.T, err error) uint32 {
	if err == nil {
		return 0
	}
	ex, _ := exitOf(context.Background(), Exit{}, err, Policy{})
	return ex.Code
}

// treeOf describes a directory by relative names, types and contents.
func treeOf(t *testing.T, root string) string {
	var out bytes.Buffer
	must(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out.WriteString(rel + " " + fi.Mode().Type().String())
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			out.Write(b)
		}
		out.WriteByte('\n')
		return nil
	}))
	return out.String()
}

// Files and directories a guest makes on a plain mount get 0644 and 0755
// less the process's umask, as those applied from an overlay do: WASI
// carries no mode, and wazero asks 0600 and 0700. (`cairn exec` once made
// every file 0600 and every directory 0700.)
func TestExecCreatesWithUsualModes(t *testing.T) {
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	dir := t.TempDir()
	var out bytes.Buffer
	_, err := compile(t, "ovprog").Run(context.Background(), Policy{Args: []string{"write:/work/a.txt:x", "mkdir:/work/d"},
		Mounts: []Mount{{HostPath: dir, GuestPath: "/work"}}}, nil, &out, &out)
	must(t, err)
	for p, want := range map[string]os.FileMode{"a.txt": 0o644, "d": 0o755} {
		fi, err := os.Stat(filepath.Join(dir, p))
		must(t, err)
		if got, want := fi.Mode().Perm(), want&^os.FileMode(umask); got != want {
			t.Errorf("%s: mode %v, want %v (umask %03o)\n%s", p, got, want, umask, out.String())
		}
	}
}
