package overlay

import "path/filepath"

// StagedFile is the file in a call's staging directory that holds the new
// content of workspace path p (an Effect's New), until the staging
// directory is discarded.
func StagedFile(staging, p string) string { return filepath.Join(staging, blobName(p)) }
