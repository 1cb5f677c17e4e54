package checkpoint

import "io/fs"

// Recording is what one sandboxed call ran with and came to, kept so that
// `cairn verify` can run the call again in a fresh instance and compare.
// It travels in the call's Result (key 60) and, once its round commits,
// in the tool message that answers the call (key 60), so that compacting
// the journal into a snapshot keeps it.
//
// The files a call saw are named by the digest of their content; with the
// agent file's `record: reads` their content is kept in the store too
// (PutBlob, so one content is stored once however many calls read it). The module is named by the digest its bytes are stored
// under (the agent's Definition keeps them).
type Recording struct {
	// Round is the round the call ran in.
	Round int `cbor:"1,keyasint"`
	// Module is the blob digest of the tool module's bytes; Ref is the
	// module as the agent file names it ("builtin" or a path).
	Module string `cbor:"2,keyasint"`
	Ref    string `cbor:"3,keyasint,omitempty"`
	// Policy is a digest of the sandbox policy the call ran under (limits,
	// mounts, clock, randomness, imports, environment names).
	Policy string `cbor:"4,keyasint,omitempty"`
	// RealClock and RealRandom say the call was granted the host's clock
	// or random source: such a call need not give the same result twice.
	// Otherwise its clock is the sandbox's fixed one and its randomness
	// the sandbox's, seeded with Seed.
	RealClock  bool  `cbor:"5,keyasint,omitempty"`
	RealRandom bool  `cbor:"6,keyasint,omitempty"`
	Seed       int64 `cbor:"7,keyasint,omitempty"`
	// Files is what the call saw of its workspace, sorted by path.
	Files []SeenFile `cbor:"8,keyasint,omitempty"`
	// Output is the SHA-256 of the text the call answered (its output,
	// or its error); IsError says which.
	Output  [32]byte `cbor:"9,keyasint"`
	IsError bool     `cbor:"10,keyasint,omitempty"`
	// Effects is the call's effect manifest as the sandbox encodes it,
	// before the round settled it.
	Effects []byte `cbor:"11,keyasint,omitempty"`
	// Outside lists what the call could read that is not recorded: the
	// guest paths of mounts outside the workspace, environment names.
	Outside []string `cbor:"12,keyasint,omitempty"`
}

// SeenFile is one path of the workspace as a call saw it: a directory, or
// a regular file with its size and permission and, when the call read it
// or changed it, its content's digest (as BlobDigest makes it). Kept says
// the content is in the store under Digest (the agent file's `record:
// reads`). A file the call only listed or looked at has no Digest: its
// content did not reach the call.
type SeenFile struct {
	Path   string      `cbor:"1,keyasint"`
	Dir    bool        `cbor:"2,keyasint,omitempty"`
	Size   int64       `cbor:"3,keyasint,omitempty"`
	Mode   fs.FileMode `cbor:"4,keyasint,omitempty"`
	Digest string      `cbor:"5,keyasint,omitempty"`
	Kept   bool        `cbor:"6,keyasint,omitempty"`
}

// markRecordings marks the blobs the recordings of st's calls name, so
// that collecting garbage keeps what `cairn verify` needs.
func markRecordings(st *State, inUse map[string]bool) {
	if st == nil {
		return
	}
	for _, m := range st.Messages {
		if m.Recording == nil {
			continue
		}
		inUse[m.Recording.Module] = true
		for _, f := range m.Recording.Files {
			if f.Kept {
				inUse[f.Digest] = true
			}
		}
	}
}

// MarkRecordings is markRecordings for stores kept outside this package.
func MarkRecordings(st *State, inUse map[string]bool) { markRecordings(st, inUse) }
