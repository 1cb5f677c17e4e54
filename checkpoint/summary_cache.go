package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// summaryCache keeps each agent's Summary with the identity of the files
// it was read from, for a process that summarises the store again and
// again (cairn serve answers the web view's list, which it asks for every
// few seconds): an agent whose files are as they were is not read again,
// where a read decodes its whole state, megabytes for a long history.
//
// The identity (filesKey) is every file of the agent's directory a read
// looks at, by name, size, modification time and inode, with the commit mark's
// bytes, which a commit rewrites in place at the same size; and the same
// of the store's group logs, where a group-committing store keeps the
// agents' newest records. A writer changes one of them with every record
// it appends, every compaction and every repair, so a summary is read
// again once anything it was read from changed. Locked is looked at
// afresh every time.
type summaryCache struct {
	mu   sync.Mutex
	byID map[string]cachedSummary
}

type cachedSummary struct {
	key string
	sum Summary
}

// notRead are the files of an agent's directory that a read does not
// look at: its lock, its event history and its past, which change
// without its state changing.
var notRead = map[string]bool{"lock": true, eventsFile: true, pastFile: true, pastIndexFile: true}

// get is the summary kept for the agent under key, if any.
func (c *summaryCache) get(id, key string) (Summary, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[id]
	return e.sum, ok && e.key == key
}

// put keeps sum for the agent under key.
func (c *summaryCache) put(id, key string, sum Summary) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[string]cachedSummary{}
	}
	c.byID[id] = cachedSummary{key, sum}
}

// keep forgets every agent but those listed, so that the cache holds no
// more than the store's agents.
func (c *summaryCache) keep(ids map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.byID {
		if !ids[id] {
			delete(c.byID, id)
		}
	}
}

// filesKey is the identity of what a read of the agent in dir looks at
// (see summaryCache), with group that of the store's group logs
// (groupKey); false when it cannot be had, and the agent is then read.
func filesKey(dir, group string) (string, bool) {
	var b strings.Builder
	if !appendDirKey(&b, dir) {
		return "", false
	}
	b.WriteString("mark=")
	b.Write(readMarkBytes(dir))
	b.WriteString("\ngroup\n")
	b.WriteString(group)
	return b.String(), true
}

// groupKey is the identity of the store's group logs in groupDir: empty
// when there is none; false when it cannot be had.
func groupKey(groupDir string) (string, bool) {
	var b strings.Builder
	if _, err := os.Lstat(groupDir); err == nil && !appendDirKey(&b, groupDir) {
		return "", false
	}
	return b.String(), true
}

// appendDirKey appends the name, kind, size, modification time and inode
// of each file of dir a read looks at.
func appendDirKey(b *strings.Builder, dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if notRead[e.Name()] {
			continue
		}
		fi, err := os.Lstat(filepath.Join(dir, e.Name()))
		if err != nil {
			return false
		}
		var ino uint64
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = uint64(st.Ino) // a file replaced by a rename, as a snapshot is
		}
		fmt.Fprintf(b, "%s %v %d %d %d\n", e.Name(), fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), ino)
	}
	return true
}
