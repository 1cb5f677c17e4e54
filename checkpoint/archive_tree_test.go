package checkpoint

import (
	"bytes"
	"errors"
	"testing"
)

// tree makes, in s, agent a1 (as exportable does) with a sub-agent c1, and
// c1 with a sub-agent g1.
func tree(t *testing.T) *FileStore {
	s, _ := exportable(t)
	child := func(id, parent string, depth int) {
		st := NewState(id, Definition{Workspace: "/ws"}, Labels{}, t0)
		st.Parent = &Parent{Agent: parent, Call: "call_1_0", Name: "helper", Depth: depth}
		log, err := s.Create(id, st)
		must(t, err)
		commitRound(t, log, 1)
		must(t, log.Close())
	}
	child("c1", "a1", 1)
	child("g1", "c1", 2)
	return s
}

// An agent's sub-agents travel with it: exported as one file, imported
// into another store, each reads back with its lineage.
func TestExportCarriesTheTree(t *testing.T) {
	src := tree(t)
	a, err := ReadArchive(bytes.NewReader(exportBytes(t, src)))
	must(t, err)
	if a.Version != 3 || a.Agents() != 3 {
		t.Fatalf("version %d, %d agents", a.Version, a.Agents())
	}
	dst := NewMemStore()
	must(t, Import(dst, a, ThisProcess("import")))
	for id, parent := range map[string]string{"c1": "a1", "g1": "c1"} {
		got, err := dst.Read(id)
		must(t, err)
		want, err := src.Read(id)
		must(t, err)
		if got.State.Parent == nil || got.State.Parent.Agent != parent || got.State.Round != want.State.Round {
			t.Fatalf("%s imported as %+v", id, got.State)
		}
	}
}

// An import that would overwrite any agent of the tree writes nothing.
func TestImportOfATreeRefusesAnyExistingAgent(t *testing.T) {
	a, err := Export(tree(t), "a1")
	must(t, err)
	dst := NewMemStore()
	log, err := dst.Create("g1", NewState("g1", Definition{Workspace: "/ws"}, Labels{}, t0))
	must(t, err)
	must(t, log.Close())
	if err := Import(dst, a, ThisProcess("import")); !errors.Is(err, ErrExists) {
		t.Fatalf("import over g1: %v", err)
	}
	if dst.Exists("a1") || dst.Exists("c1") {
		t.Fatal("a refused import wrote agents")
	}
}

// A sub-agent that does not name its parent, or an agent in the tree
// twice, is a corrupt export.
func TestCorruptTreeRefused(t *testing.T) {
	for name, damage := range map[string]func(a *Archive){
		"orphan": func(a *Archive) { a.Children[0].State.Parent.Agent = "someone-else" },
		"twice":  func(a *Archive) { a.Children = append(a.Children, a.Children[0]) },
		"nil":    func(a *Archive) { a.Children = append(a.Children, nil) },
	} {
		a, err := Export(tree(t), "a1")
		must(t, err)
		damage(a)
		var ce *CorruptError
		if err := a.check(); !errors.As(err, &ce) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
