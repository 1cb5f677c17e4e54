// Package overlay stages what one tool call changes in a workspace and
// applies it afterwards. An Overlay, mounted in a call (sandbox.Mount),
// lets the guest read the workspace and write only into a staging
// directory of its own; after the call its Effects list each changed
// path with its base (what the workspace held when the call first changed
// it) and its new version. Check says whether the workspace still matches
// those bases, Apply makes the changes in the workspace crash-safely and
// idempotently, and Discard removes the staging directory. Effects are
// journaled by the host: Marshal and DecodeEffects are their CBOR form,
// and DecodeEffects refuses a manifest that could reach outside the
// workspace.
//
// The life of a call's changes:
//
//	ov, err := overlay.New(workspace, staging)
//	// run the call with sandbox.Mount{GuestPath: "/work", Overlay: ov}
//	effects, err := ov.Effects()
//	ov.Close()
//	err = overlay.SyncStaged(staging, effects) // before journaling them
//	conflicts, err := overlay.Check(workspace, effects)
//	err = overlay.Apply(workspace, staging, effects)
//	err = overlay.Discard(staging)
package overlay

import "errors"

// ErrStagingLimit is a call that tried to stage more in an overlay than
// its limits allow (sandbox.Policy's StagingLimit and MaxStagedPaths);
// sandbox's Module.Call fails with it.
var ErrStagingLimit = errors.New("staging limit reached")

// ErrNameLimit is the ErrStagingLimit of a call whose changed paths'
// names came to more than the record of one call holds (4 MiB): unlike
// the others, no setting raises it.
var ErrNameLimit = errors.New("the names of the changed paths are past their bound")

// nameLimitError is the message of an ErrNameLimit, which is also an
// ErrStagingLimit.
type nameLimitError string

func (e nameLimitError) Error() string   { return string(e) }
func (e nameLimitError) Unwrap() []error { return []error{ErrStagingLimit, ErrNameLimit} }

// ErrNoSpace is a call that changed the workspace when the disk of its
// staging directory had no room for the change (ENOSPC, EDQUOT): the
// host's disk is full, which is no limit of the call's and no fault of
// its tool. The guest got ENOSPC (or EDQUOT); the call fails with
// it, through Overlay.Exhausted, and none of its changes are kept.
var ErrNoSpace = errors.New("the host's disk is full")

// ErrSeenLimit is a call that read, described (stat) or listed more of
// the workspace than an overlay records of what a call saw (see
// Overlay.Reads and Overlay.Seen): past that bound its record for the
// file pool and `cairn verify` would be incomplete, so the call fails
// with it (through Overlay.Exhausted, as for the staging limits) rather
// than the host's memory growing without end.
var ErrSeenLimit = errors.New("seen limit reached")
