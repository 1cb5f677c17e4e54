package checkpoint

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
