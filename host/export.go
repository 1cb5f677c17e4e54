package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Export reads an agent and its sub-agents from store into an archive, as
// checkpoint.Export does, and adds the files that finished calls of their
// interrupted rounds staged, applied or not. A resume in the store the
// archive is imported into rebuilds the workspace with the applied ones
// and applies the others, and takes the files from that store; they come
// from this store, or else from the staging of this node, where a call
// stages them before they are kept in the store. (No past holds them yet:
// a round's past is kept once it commits.)
//
// # Errors
//
// checkpoint.Export's; and, for a file of an unapplied change that is
// neither in the store nor staged here, an error saying to resume the
// agent here first.
func Export(store checkpoint.Store, agent string) (*checkpoint.Archive, error) {
	a, err := checkpoint.Export(store, agent)
	if err != nil {
		return nil, err
	}
	if err := addStaged(store, a); err != nil {
		return nil, err
	}
	return a, nil
}

// addStaged adds to a, and to the archives of its sub-agents, the files
// their interrupted rounds' changes write, applied or not.
func addStaged(store checkpoint.Store, a *checkpoint.Archive) error {
	recs, err := a.Records()
	if err != nil {
		return fmt.Errorf("export agent %q: %w", a.Agent, err)
	}
	for _, r := range recs {
		if r.Type != checkpoint.RecResult || r.Result == nil || len(r.Result.Effects) == 0 {
			continue
		}
		effects, err := overlay.DecodeEffects(r.Result.Effects)
		if err != nil {
			return fmt.Errorf("export agent %q: the changes of call %s: %w", a.Agent, r.Call, err)
		}
		staging := callStaging(roundStagingIn(stagingRootOf(store, a.Agent), r.Round), r.Call)
		for _, e := range effects {
			if !e.New.IsFile() {
				continue
			}
			d := "sha256:" + hex.EncodeToString(e.New.Hash[:])
			if _, ok := a.Blobs[d]; ok {
				continue
			}
			data, err := store.Blob(d)
			if err != nil {
				data, err = stagedContent(staging, e)
			}
			if err != nil {
				return fmt.Errorf("export agent %q: call %s of its interrupted round wrote %s, which is neither in the store nor staged on this node (%w); "+
					"resume the agent here, which applies it, then export it", a.Agent, r.Call, e.Path, err)
			}
			a.Blobs[d] = data
		}
	}
	for _, c := range a.Children {
		if err := addStaged(store, c); err != nil {
			return err
		}
	}
	return nil
}

// stagedContent is the file a call staged for e, if it is the one e names.
func stagedContent(staging string, e overlay.Effect) ([]byte, error) {
	data, err := os.ReadFile(overlay.StagedFile(staging, e.Path))
	if err != nil {
		return nil, err
	}
	if sha256.Sum256(data) != e.New.Hash {
		return nil, fmt.Errorf("the staged %s is not the file its call wrote", e.Path)
	}
	return data, nil
}
