package checkpoint

import (
	"fmt"
	"path/filepath"
	"regexp"
)

// A namespace keeps the agents of one tenant or application apart from
// the others in one store: agent ids are unique within a namespace, and
// listing, collecting and locking see one namespace only. The default
// namespace ("" or "default") is the store as it always was.
//
// In a directory, a namespace is a store of its own below the default
// one's:
//
//	<dir>/agents/…                     the default namespace
//	<dir>/namespaces/<name>/agents/…   namespace <name>, its blobs beside
//
// so a store made before namespaces keeps working as the default one.

var namespaceName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,47}$`)

// DefaultNamespace is the namespace of a store opened without one.
const DefaultNamespace = "default"

// CheckNamespace refuses a namespace name that could not name one
// directory or one database schema.
func CheckNamespace(ns string) error {
	if ns == "" || ns == DefaultNamespace || namespaceName.MatchString(ns) {
		return nil
	}
	return fmt.Errorf("namespace %q: want 1 to 48 of lowercase letters, digits, '_' and '-', starting with a letter or digit", ns)
}

// NamespaceDir is the directory of namespace ns of the file store in dir.
func NamespaceDir(dir, ns string) (string, error) {
	if err := CheckNamespace(ns); err != nil {
		return "", err
	}
	if ns == "" || ns == DefaultNamespace {
		return dir, nil
	}
	return filepath.Join(dir, "namespaces", ns), nil
}
