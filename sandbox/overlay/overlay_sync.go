package overlay

import (
	"fmt"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// SyncStaged makes a call's staged changes durable: the content of every
// file its effects write, then the staging directory that names them. The
// host calls it before it journals the result whose effect manifest
// refers to them, so that a power cut can never leave a journaled change
// whose new content is gone (Apply would then refuse it forever). The
// directories above staging are the caller's to sync, once, after it made
// them.
//
// # Errors
//
// A staged file that is missing or cannot be synced, named in the error.
func SyncStaged(staging string, effects Effects) error {
	synced := false
	for _, e := range effects {
		if !e.New.IsFile() {
			continue
		}
		if err := syncpoint.SyncFile(StagedFile(staging, e.Path)); err != nil {
			return fmt.Errorf("sync the staged content of %s: %w", e.Path, err)
		}
		synced = true
	}
	if !synced {
		return nil // only removals and directories: nothing staged to read
	}
	if err := syncpoint.SyncFile(staging); err != nil {
		return fmt.Errorf("sync the staging directory: %w", err)
	}
	return nil
}
