package host

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/plural"
)

// ForkFilledDiffError is ErrWorkspaceDiffers of a fork run again over the
// workspace it filled before it was killed: the workspace is not what the
// fork fills (files edited, added or removed in it since, or a source
// that changed), and is not taken for the new agent's.
type ForkFilledDiffError struct {
	Agent, From, Source, Dir string
	Diffs                    []WorkspaceDiff
}

func (e *ForkFilledDiffError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workspace %s, which this fork as %q filled before it was stopped, differs from what it forks (%s of agent %q) in %s:",
		e.Dir, e.Agent, e.Source, e.From, plural.Count(len(e.Diffs), "path"))
	writeDiffs(&b, e.Diffs)
	fmt.Fprintf(&b, "; nothing was changed and the agent was not made: to fork into it anew, remove the directory (what was changed in it goes with it) "+
		"and run the fork again, or fork into another directory (-w) and leave this one as it is")
	return b.String()
}

func (e *ForkFilledDiffError) Is(target error) bool { return target == ErrWorkspaceDiffers }

// checkFilled compares dir, the workspace a killed run of the same fork
// filled, with what the fork fills (ws), hashing every file, but for the
// fork's mark in it.
//
// # Errors
//
// A *ForkFilledDiffError naming each path that differs.
func checkFilled(ws forkWorkspace, dir string, opts ForkOptions) error {
	want := ws.manifest
	if want == nil {
		var err error
		if want, err = archiveManifest(ws.archive); err != nil {
			return err
		}
	}
	diffs, err := reconcile(want, nil, dir)
	if err != nil {
		return fmt.Errorf("compare %s with what the fork fills: %w", dir, err)
	}
	diffs = slices.DeleteFunc(diffs, func(d WorkspaceDiff) bool { return d.Path == forkMarkName })
	if len(diffs) == 0 {
		return nil
	}
	return &ForkFilledDiffError{Agent: opts.As, From: opts.ID, Source: forkSourceName(opts), Dir: dir, Diffs: diffs}
}

// archiveManifest is the workspace a workspace archive (archiveWorkspace)
// holds, as a manifest: its directories, and its files with their
// digests.
func archiveManifest(archive []byte) ([]checkpoint.WorkspaceEntry, error) {
	var m []checkpoint.WorkspaceEntry
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read workspace archive: %w", err)
		}
		e := checkpoint.WorkspaceEntry{Path: path.Clean(hdr.Name), Mode: uint32(hdr.FileInfo().Mode().Perm())}
		switch hdr.Typeflag {
		case tar.TypeDir:
			e.Dir = true
		case tar.TypeReg:
			h := sha256.New()
			if e.Size, err = io.Copy(h, tr); err != nil {
				return nil, fmt.Errorf("read workspace archive: %w", err)
			}
			e.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
		default:
			continue // nothing else is extracted
		}
		m = append(m, e)
	}
}
