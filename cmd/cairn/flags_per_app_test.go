package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// The flags were values shared by every app of a process, and urfave/cli
// keeps in a flag the value it applied from a variable: a command line
// run after one that had $CAIRN_STORE set went on with that store with
// the variable gone (a second command line in a test binary, a library
// user's second app), and would have gone on with $CAIRN_CACHE's cache
// and $CAIRN_ENGINE's engine. Each app has flags of its own: the second
// command line reads the default store, and no flag of one app (--json,
// --auto-deny, --store, …) is another's.
func TestSecondCommandLineGoesOnWithNoVariableTheFirstRead(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "no-store")
	t.Setenv("CAIRN_STORE", gone)
	code, _, errOut := cairn(t, "ls", "--json")
	if code != exitUsage || !strings.Contains(errOut, gone) {
		t.Fatalf("ls with $CAIRN_STORE=%s: exit %d, want %d naming it\n%s", gone, code, exitUsage, errOut)
	}
	os.Unsetenv("CAIRN_STORE")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	if code, out, errOut := cairn(t, "ls"); code != exitDone || strings.Contains(out+errOut, gone) {
		t.Errorf("ls after $CAIRN_STORE was unset: exit %d, want %d, the default store's agents (none)\n%s%s", code, exitDone, out, errOut)
	}

	first := map[cli.Flag]bool{}
	var walk func(path string, cmds []*cli.Command, each func(path string, f cli.Flag))
	walk = func(path string, cmds []*cli.Command, each func(path string, f cli.Flag)) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				each(path+" "+c.Name, f)
			}
			walk(path+" "+c.Name, c.Subcommands, each)
		}
	}
	walk("cairn", newApp(nil, nil, nil).Commands, func(_ string, f cli.Flag) { first[f] = true })
	walk("cairn", newApp(nil, nil, nil).Commands, func(path string, f cli.Flag) {
		if first[f] {
			t.Errorf("%s --%s is a flag of the app made before too", path, f.Names()[0])
		}
	})
}
