package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a compile cache directory that is a link to a directory
// others can write (a shared one, such as /tmp) was refused with the
// advice to chmod 700 it, which, followed, takes the shared directory
// from everyone else; one that is a link to nothing was refused as "file
// exists". Each refusal names where the link leads and says what to do
// with the link; nothing is changed.
func TestCacheDirThatIsALinkIsRefusedNamingWhereItLeads(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	shared := filepath.Join(base, "shared")
	must(t, os.Mkdir(shared, 0o700))
	must(t, os.Chmod(shared, 0o777|os.ModeSticky))
	nowhere := filepath.Join(base, "nowhere")
	for _, c := range []struct{ name, target, want string }{
		{"to a shared directory", shared, "point the link at a directory of your own"},
		{"to nothing", nowhere, "make the directory it links to, or remove the link"},
	} {
		link := filepath.Join(base, "cache-"+strings.ReplaceAll(c.name, " ", "-"))
		must(t, os.Symlink(c.target, link))
		_, err := NewRuntime(ctx, Config{CacheDir: link})
		if err == nil || !strings.Contains(err.Error(), "a link to "+c.target) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "chmod") {
			t.Errorf("a cache directory that is a link %s: %v; want it refused naming %s and saying to %q", c.name, err, c.target, c.want)
		}
	}
	if fi, err := os.Stat(shared); err != nil || fi.Mode()&os.ModePerm != 0o777 || fi.Mode()&os.ModeSticky == 0 {
		t.Errorf("the shared directory was changed: %v, %v", fi.Mode(), err)
	}
	if exists(nowhere) {
		t.Error("a directory was made where the link to nothing leads")
	}
}
