package checkpoint

import (
	"slices"
	"strings"
)

// FileEntry is what the agent last knew of one workspace file: the file
// pool's entry (package filepool), kept in the loop state with the same
// keys so that the pool survives a restart.
type FileEntry struct {
	Path    string   `cbor:"1,keyasint"`
	Exists  bool     `cbor:"2,keyasint,omitempty"`
	Hash    [32]byte `cbor:"3,keyasint"`
	Size    int64    `cbor:"4,keyasint,omitempty"`
	Round   int      `cbor:"5,keyasint,omitempty"`
	Call    string   `cbor:"6,keyasint,omitempty"`
	Op      string   `cbor:"7,keyasint"`
	Outside bool     `cbor:"8,keyasint,omitempty"`
}

// MaxFileEntries bounds State.Files; past it the entries of the oldest
// rounds are forgotten first, by path among equals, as the file pool does.
const MaxFileEntries = 1024

// mergeFiles applies a round's changed entries, keeping Files sorted by
// path and bounded.
func (s *State) mergeFiles(changed []FileEntry) {
	for _, e := range changed {
		i, found := slices.BinarySearchFunc(s.Files, e.Path, func(f FileEntry, p string) int { return strings.Compare(f.Path, p) })
		if found {
			s.Files[i] = e
		} else {
			s.Files = slices.Insert(s.Files, i, e)
		}
	}
	for len(s.Files) > MaxFileEntries {
		oldest := 0
		for i, f := range s.Files {
			if f.Round < s.Files[oldest].Round {
				oldest = i
			}
		}
		s.Files = slices.Delete(s.Files, oldest, oldest+1)
	}
}
