package overlay

import (
	"sort"
	"strings"
)

// saw notes that the call described the workspace's path p, or listed
// the directory p (with a trailing slash), as the workspace holds it. The
// caller holds o.mu.
func (o *Overlay) saw(p string) {
	if o.looked == nil {
		o.looked = map[string]bool{}
	}
	o.looked[p] = true
}

// Seen lists, sorted, what the call learnt of the workspace without
// reading a file's content: the paths it described (stat) as the
// workspace held them, and the directories it listed. Together with Reads
// and the bases of its Effects it is what the call saw of the workspace,
// which is what running the call again needs to hold. The paths are
// slash paths relative to the workspace ("." for the workspace itself).
func (o *Overlay) Seen() (described, listed []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for p := range o.looked {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			listed = append(listed, dir)
		} else {
			described = append(described, p)
		}
	}
	sort.Strings(described)
	sort.Strings(listed)
	return described, listed
}
