package pgstore_test

import (
	"fmt"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/checkpoint/storetest"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Each namespace of one database is a store of its own: the suite passes
// in one, and two namespaces hold agents of one id apart, each listing
// and locking only its own; the default namespace is untouched.
func TestNamespaces(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	n := 0
	storetest.Run(t, func(t *testing.T) checkpoint.Store {
		n++
		return open(t, url, pgstore.WithNamespace(fmt.Sprintf("suite-%d", n)))
	})
	acme, beta, def := open(t, url, pgstore.WithNamespace("acme")), open(t, url, pgstore.WithNamespace("beta")), open(t, url)
	for _, s := range []*pgstore.Store{acme, beta} {
		lock, err := s.Lock("same-id", checkpoint.ThisProcess("run-1")) // both at once: apart
		must(t, err)
		defer lock.Unlock()
		log, err := s.Create("same-id", newState("same-id"))
		must(t, err)
		log.Close()
	}
	for _, s := range []*pgstore.Store{acme, beta} {
		list, err := s.List()
		must(t, err)
		if len(list) != 1 || list[0].ID != "same-id" {
			t.Fatalf("a namespace lists %+v", list)
		}
	}
	if list, err := def.List(); err != nil || len(list) != 0 {
		t.Fatalf("the default namespace lists %+v, %v", list, err)
	}
	if _, err := pgstore.Open(t.Context(), url, pgstore.WithNamespace("Bad Name")); err == nil {
		t.Fatal("a bad namespace name was taken")
	}
}

// A store's Identity names its database and namespace: the same for two
// stores opened on them, different for another namespace or database,
// and never the password.
func TestIdentityNamesDatabaseAndNamespace(t *testing.T) {
	srv := pgtest.Shared(t)
	url, other := srv.NewDatabase(t), srv.NewDatabase(t)
	a, again := open(t, url, pgstore.WithNamespace("acme")), open(t, url, pgstore.WithNamespace("acme"))
	beta, def, elsewhere := open(t, url, pgstore.WithNamespace("beta")), open(t, url), open(t, other, pgstore.WithNamespace("acme"))
	if a.Identity() != again.Identity() {
		t.Errorf("one database and namespace, two identities: %q and %q", a.Identity(), again.Identity())
	}
	for _, s := range []*pgstore.Store{beta, def, elsewhere} {
		if s.Identity() == a.Identity() {
			t.Errorf("%q is the identity of another namespace or database too", s.Identity())
		}
	}
	t.Logf("identity: %s", a.Identity())
}
