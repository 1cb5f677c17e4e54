// Package dirtree reads a directory tree into a map, for tests that compare
// what a guest or an apply left on disk with what they should have.
package dirtree

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Read returns everything under dir by slash path: a file's content, ""
// for a directory (whose path ends in a slash), "-> target" for a
// symlink, and "special " and the type of anything else.
func Read(dir string) (map[string]string, error) {
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m[rel] = "-> " + target
		case d.IsDir():
			m[rel+"/"] = ""
		case !d.Type().IsRegular():
			m[rel] = "special " + d.Type().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = string(b)
		}
		return nil
	})
	return m, err
}
