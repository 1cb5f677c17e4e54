package overlay

import (
	"fmt"
	"sort"
	"strings"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// What one call may have recorded as seen (Seen and Reads together): a
// bound in paths and in bytes of their names, so that describing or
// opening paths cannot grow the host's memory without end. Only what the
// workspace holds is recorded, which bounds it already but for the names
// symlinks multiply ("l/m/l/f" with l and m links to "."); the bound is
// far above what a tool that walks a large workspace describes and reads.
const (
	maxSeenPaths = 100_000
	maxSeenBytes = 16 << 20
)

// sightBound bounds what an overlay records as seen.
type sightBound struct{ paths, bytes int }

// saw notes that the call described the workspace's path p, which the
// workspace holds, or listed the directory p (with a trailing slash), as
// the workspace holds it. Past the overlay's bound it fails (EIO) and
// the call with it (see Exhausted): what the call
// saw could no longer all be recorded, and a verify that ran it again on
// less would not be running the same call. The caller holds o.mu.
func (o *Overlay) saw(p string) experimentalsys.Errno {
	if o.looked[p] {
		return 0
	}
	if !o.sightRoom(p) {
		return errFull
	}
	if o.looked == nil {
		o.looked = map[string]bool{}
	}
	o.looked[p] = true
	o.seenBytes += len(p)
	return 0
}

// sightRoom reports whether the record of what the call saw has room for
// one more path, p; when it has not, the call is marked as over the bound
// (see seenExhausted). The caller holds o.mu.
func (o *Overlay) sightRoom(p string) bool {
	if len(o.looked)+len(o.reads) >= o.sight.paths || o.seenBytes+len(p) > o.sight.bytes {
		o.overSeen = true
		return false
	}
	return true
}

// seenExhausted is the ErrSeenLimit of a call that read, described or
// listed more than the overlay records, else nil. The caller holds o.mu.
func (o *Overlay) seenExhausted() error {
	if !o.overSeen {
		return nil
	}
	return fmt.Errorf("%w: the call read, described (stat) or listed more than %d paths, or %d bytes of path names, of the workspace, more than is recorded of what one call saw",
		ErrSeenLimit, o.sight.paths, o.sight.bytes)
}

// Seen lists, sorted, what the call learnt of the workspace without
// reading a file's content: the paths it described (stat) that the
// workspace held, and the directories of the workspace it listed. A path
// it found missing is not listed: a workspace made of what the call saw
// lacks it anyway. Together with Reads and the bases of its Effects it is
// what the call saw of the workspace, which is what running the call
// again needs to hold. The paths are slash paths relative to the
// workspace ("." for the workspace itself).
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
