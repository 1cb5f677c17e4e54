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

// MarkState marks every blob st names, so that Collect keeps it: its
// definition's agent file, script and modules, the response bodies its
// exchanges keep (and those of tail, the records of its interrupted
// round), and its calls' recordings. The file store marks an agent's
// state and its bookmarks' with it; a Store kept outside this package
// marks with it what the file store does.
func MarkState(st *State, tail []Record, inUse map[string]bool) {
	markExchanges(nil, tail, inUse)
	if st == nil {
		return
	}
	markDefinition(st.Definition, inUse)
	markExchanges(st.Messages, nil, inUse)
	markRecordings(st, inUse)
}
