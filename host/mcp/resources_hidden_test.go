package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: the resources listed were the first files of the
// workspace in the order of its names, where a dot sorts first, so a
// project with a .git directory of more files than are listed had only
// files of .git listed, none of its own. Its own files are listed first,
// then those of hidden directories and hidden files, as many as fit.
func TestResourcesListTheWorkspaceBeforeHiddenFiles(t *testing.T) {
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, ".git", "objects", "ab"), 0o755))
	for i := range 20 {
		must(t, os.WriteFile(filepath.Join(ws, ".git", "objects", "ab", fmt.Sprintf("%038d", i)), []byte("x"), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("x"), 0o644))
	must(t, os.MkdirAll(filepath.Join(ws, "src", "deep", "er"), 0o755))
	own := []string{"README.md", "src/main.go", "src/deep/er/x.go"}
	for _, f := range own {
		must(t, os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644))
	}
	list := func(max int) map[string]bool {
		srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
		_, err := newResources(srv, ws, max)
		must(t, err)
		st, ct := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		must(t, err)
		defer ss.Close()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
		must(t, err)
		defer cs.Close()
		res, err := cs.ListResources(context.Background(), nil)
		must(t, err)
		names := map[string]bool{}
		for _, r := range res.Resources {
			names[r.Name] = true
		}
		return names
	}
	got := list(5)
	for _, f := range own {
		if !got[f] {
			t.Errorf("%s not listed among 5 resources: %v", f, got)
		}
	}
	if len(got) != 5 {
		t.Errorf("%d resources listed, want 5: %v", len(got), got)
	}
	if got := list(100); len(got) != 3+20+1 || !got[".env"] || !got[".git/objects/ab/"+fmt.Sprintf("%038d", 3)] {
		t.Errorf("with room for every file, %d listed: %v", len(got), got)
	}
}
