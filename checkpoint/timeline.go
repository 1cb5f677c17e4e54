package checkpoint

import (
	"errors"
	"fmt"
	"sort"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Timeline keeps an agent's past boundaries, so that its workspace can
// travel with it (a node that never saw the agent rebuilds the workspace
// from the store) and a new agent can be forked from any round, not only
// the last one. A Store that keeps no past does not implement Timeline;
// FileStore, MemStore and pgstore do.
//
// Each committed round leaves one Past: the state at the boundary without
// its conversation (which only grows, so the boundary's is a prefix of the
// newest), and what the round's calls changed in the workspace, each file
// content a blob. A Past with a Base holds the whole workspace instead:
// the first boundary the store saw (the workspace the agent started with),
// and any boundary after a gap.
type Timeline interface {
	// PutPast keeps a past boundary of the agent, replacing one of the
	// same round. The blobs it names are stored first. The caller holds
	// the agent's lock; ErrNotFound when the agent has no state.
	PutPast(agent string, p Past) error
	// Pasts lists the agent's past boundaries by round, one per round; an
	// agent that has none (or no state) has an empty list.
	Pasts(agent string) ([]Past, error)
	// NewestPast is the agent's past of the highest round, as the last
	// of Pasts, read without the others; false when it has none. A resume
	// needs only this one.
	NewestPast(agent string) (Past, bool, error)
}

var (
	_ Timeline = (*FileStore)(nil)
	_ Timeline = (*MemStore)(nil)
)

// Past is one past boundary of an agent.
type Past struct {
	Round int `cbor:"1,keyasint"`
	// Messages is how many messages the conversation held at the boundary.
	Messages int `cbor:"2,keyasint"`
	// State is the state at the boundary, without its messages.
	State *State `cbor:"3,keyasint"`
	// Base, when set, is the digest of the blob holding the manifest of
	// the whole workspace at the boundary (EncodeManifest).
	Base string `cbor:"4,keyasint,omitempty"`
	// Changes are what the round changed in the workspace since the
	// boundary before it, in the order they were applied.
	Changes []WorkspaceEntry `cbor:"5,keyasint,omitempty"`
	// Trimmed marks the oldest past left after `cairn gc --keep-rounds`
	// removed the pasts of the rounds before it: its Base holds the whole
	// workspace at its boundary, and its own changes were removed with
	// the rest, so that its round can be forked at but not diffed.
	Trimmed bool `cbor:"6,keyasint,omitempty"`
}

// ErrNoPast: the store keeps no past boundary for that round of the agent.
var ErrNoPast = errors.New("no past boundary kept for that round")

// ErrNoRound: the agent never had that round, one after its last
// committed round or below 0 (NoRound). It is ErrNoPast too (errors.Is):
// no past of it is kept.
var ErrNoRound error = noRound{}

type noRound struct{}

func (noRound) Error() string        { return "no round" }
func (noRound) Is(target error) bool { return target == ErrNoPast }

// NoRound is the error for round n of an agent whose last committed round
// is last, when the agent never had it (n < 0 or n > last): it names the
// last round and the rounds pasts, the agent's, can be used at, and not
// what `cairn gc --keep-rounds` removed, since it removed no such round.
// Nil for any other round.
func NoRound(pasts []Past, agent string, n, last int) error {
	if n >= 0 && n <= last {
		return nil
	}
	return fmt.Errorf("agent %q has %w %d: its last round is %d%s", agent, ErrNoRound, n, last, keptRange(pasts, n))
}

// NewPast is the past of the boundary st, with the changes its round made.
// Its State is a shallow copy of st without the messages: it shares st's
// slices and maps, so keep it (PutPast, which encodes it) before st
// changes. The error is always nil.
func NewPast(st *State, changes []WorkspaceEntry) (Past, error) {
	lean := *st
	lean.Messages = nil
	return Past{Round: st.Round, Messages: len(st.Messages), State: &lean, Changes: changes}, nil
}

// StateAt is the state at a past boundary: the past's state with the
// first p.Messages messages of now, the agent's newest state.
//
// # Errors
//
// A *CorruptError when now holds fewer messages than the past.
func StateAt(now *State, p Past) (*State, error) {
	if p.State == nil || p.Messages > len(now.Messages) {
		return nil, &CorruptError{File: fmt.Sprintf("past round %d of agent %s", p.Round, now.Agent),
			Reason: "its conversation is longer than the agent's"}
	}
	st, err := p.State.Clone()
	if err != nil {
		return nil, err
	}
	st.Messages = append([]conversation.Message(nil), now.Messages[:p.Messages]...)
	return st, nil
}

// PastAt finds the past of round n in pasts (ordered by round).
func PastAt(pasts []Past, agent string, n int) (Past, error) {
	i := sort.Search(len(pasts), func(i int) bool { return pasts[i].Round >= n })
	if i == len(pasts) || pasts[i].Round != n {
		return Past{}, fmt.Errorf("agent %q round %d: %w%s", agent, n, ErrNoPast, keptRange(pasts, n))
	}
	return pasts[i], nil
}

// keptRange says which rounds' pasts the store keeps, for an error that
// found none of round n. It names no cause when there are none, since the
// pasts cannot tell which applies (a copy turned off, an older cairn, a
// fork made by one, rows lost): it says how one is kept. It names
// `cairn gc --keep-rounds` only for a round before the oldest it kept,
// the only rounds it removed.
func keptRange(pasts []Past, n int) string {
	if len(pasts) == 0 {
		return " (the store keeps no past of it; a run where its workspace is keeps one, unless its workspace copy is off: --workspace-limit off)"
	}
	first, last := pasts[0].Round, pasts[len(pasts)-1].Round
	switch {
	case pasts[0].Trimmed && n >= 0 && n < first:
		return fmt.Sprintf(" (kept: rounds %d to %d; `cairn gc --keep-rounds` removed the pasts of the rounds before %d: "+
			"the oldest round to fork at is %d, the oldest whose changes and messages can be seen is %d)", first, last, first, first, first+1)
	case pasts[0].Trimmed:
		return fmt.Sprintf(" (kept: rounds %d to %d: the oldest round to fork at is %d, the oldest whose changes and messages can be seen is %d)",
			first, last, first, first+1)
	}
	return fmt.Sprintf(" (kept: rounds %d to %d)", first, last)
}

// TrimmedAt is the error for what round n of the agent changed, or the
// messages it added, when its past is the one `cairn gc --keep-rounds`
// left oldest (Past.Trimmed): it keeps the round's whole workspace, not
// its changes, nor the round before it. Nil for any other past.
func TrimmedAt(p Past, agent string) error {
	if !p.Trimmed {
		return nil
	}
	return fmt.Errorf("agent %q round %d: %w: `cairn gc --keep-rounds` removed its changes and the rounds before it, "+
		"and kept its workspace whole, to fork at; the oldest round whose changes and messages can be seen is %d",
		agent, p.Round, ErrNoPast, p.Round+1)
}

// TrimmedSince says whether `cairn gc --keep-rounds` trimmed the agent's
// pasts since was, a list of them, was read: the store's pasts now start
// at a Trimmed past of a round after was's first. It returns the pasts
// now. A reader that takes no lock (diff, export, fork) reads the pasts
// and then the blobs they name, and gc, which takes the agent's lock,
// may replace the one and remove the other in between: a blob of was
// found missing is then one that only the rounds gc removed named.
func TrimmedSince(s Store, agent string, was []Past) ([]Past, bool) {
	tl, ok := s.(Timeline)
	if !ok {
		return nil, false
	}
	now, err := tl.Pasts(agent)
	if err != nil || len(now) == 0 || !now[0].Trimmed {
		return now, false
	}
	return now, len(was) == 0 || now[0].Round > was[0].Round || !was[0].Trimmed
}

// RoundTrimmedMeanwhile is err, the error of reading a blob for round n of
// the agent's pasts as read before (was), or, when the blob was not found
// (ErrNotFound) and `cairn gc --keep-rounds` removed the changes of round
// n since (TrimmedSince), an error that says so, naming the rounds kept:
// it is ErrNoPast, as the round asked for once removed is.
func RoundTrimmedMeanwhile(s Store, agent string, was []Past, n int, err error) error {
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	now, trimmed := TrimmedSince(s, agent, was)
	if !trimmed || n > now[0].Round {
		return err
	}
	first, last := now[0].Round, now[len(now)-1].Round
	return fmt.Errorf("agent %q round %d: %w: `cairn gc --keep-rounds` removed its changes while they were read, and the rounds before %d "+
		"(kept: rounds %d to %d: the oldest round to fork at is %d, the oldest whose changes and messages can be seen is %d)",
		agent, n, ErrNoPast, first, first, last, first, first+1)
}

// WorkspaceAt is the agent's workspace at the boundary of round n: the
// nearest Base at or before n with every round's changes after it applied.
//
// # Errors
//
// ErrNoPast when the store has no past for a round between that base and
// n (a gap: a round whose past was lost); a *CorruptError for a manifest
// that does not decode.
func WorkspaceAt(s Store, pasts []Past, agent string, n int) ([]WorkspaceEntry, error) {
	end := sort.Search(len(pasts), func(i int) bool { return pasts[i].Round > n })
	start := end - 1
	for start >= 0 && pasts[start].Base == "" {
		start--
	}
	if start < 0 {
		return nil, fmt.Errorf("agent %q round %d: %w: no whole workspace kept at or before it%s", agent, n, ErrNoPast, keptRange(pasts, n))
	}
	for i := start + 1; i < end; i++ {
		if pasts[i].Round != pasts[i-1].Round+1 {
			return nil, fmt.Errorf("agent %q: %w: round %d's past is missing%s", agent, ErrNoPast, pasts[i-1].Round+1, keptRange(pasts, n))
		}
	}
	if end == 0 || pasts[end-1].Round != n {
		return nil, fmt.Errorf("agent %q round %d: %w%s", agent, n, ErrNoPast, keptRange(pasts, n))
	}
	data, err := s.Blob(pasts[start].Base)
	if err != nil {
		return nil, fmt.Errorf("workspace of agent %q at round %d: %w", agent, pasts[start].Round, err)
	}
	m, err := decodeManifest(data)
	if err != nil {
		return nil, fmt.Errorf("workspace of agent %q at round %d: %w", agent, pasts[start].Round, err)
	}
	for _, p := range pasts[start+1 : end] {
		m = ApplyChanges(m, p.Changes)
	}
	return m, nil
}

// pastDigests lists the blobs the pasts name: their bases and the content
// of every file they changed.
func pastDigests(pasts []Past, into map[string]bool) {
	for _, p := range pasts {
		if p.Base != "" {
			into[p.Base] = true
		}
		for _, c := range p.Changes {
			if c.Digest != "" {
				into[c.Digest] = true
			}
		}
		if p.State != nil {
			markDefinition(p.State.Definition, into)
		}
	}
}

// manifestDigests adds the blobs of the manifests' files to into, each
// manifest read with blob (a store's Blob).
func manifestDigests(blob func(string) ([]byte, error), pasts []Past, into map[string]bool) error {
	for _, p := range pasts {
		if p.Base == "" {
			continue
		}
		data, err := blob(p.Base)
		if err != nil {
			return err
		}
		m, err := decodeManifest(data)
		if err != nil {
			return err
		}
		for _, e := range m {
			if e.Digest != "" {
				into[e.Digest] = true
			}
		}
	}
	return nil
}

// encodePast and decodePast are a Past as the stores keep it.
func encodePast(p Past) ([]byte, error) { return encMode.Marshal(p) }

func decodePast(agent string, data []byte) (Past, error) {
	var p Past
	if err := decMode.Unmarshal(data, &p); err != nil {
		return p, &CorruptError{File: "past of agent " + agent, Reason: err.Error()}
	}
	if p.State != nil && p.State.Schema > schemaVersion {
		return p, &FutureSchemaError{File: fmt.Sprintf("past round %d of agent %s", p.Round, agent), Version: p.State.Schema, Supported: schemaVersion}
	}
	return p, nil
}

// EncodePast and DecodePast are a Past as a store outside this package
// keeps it (pgstore).
func EncodePast(p Past) ([]byte, error)                  { return encodePast(p) }
func DecodePast(agent string, data []byte) (Past, error) { return decodePast(agent, data) }

// sortPasts orders pasts by round, the last put of a round winning.
func sortPasts(in []Past) []Past {
	byRound := map[int]Past{}
	for _, p := range in {
		byRound[p.Round] = p
	}
	out := make([]Past, 0, len(byRound))
	for _, p := range byRound {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Round < out[j].Round })
	return out
}

// MarkPasts adds to inUse every blob the agent's pasts name: bases, the
// files of their manifests, the files its rounds wrote and the
// definitions of its past states. A store that keeps no past marks none.
func MarkPasts(s Store, agent string, inUse map[string]bool) error {
	tl, ok := s.(Timeline)
	if !ok {
		return nil
	}
	pasts, err := tl.Pasts(agent)
	if err != nil {
		return err
	}
	if rec, err := s.Read(agent); err == nil && rec.State.WorkspaceBase != "" {
		pasts = append(pasts, Past{Base: rec.State.WorkspaceBase})
	}
	pastDigests(pasts, inUse)
	return manifestDigests(s.Blob, pasts, inUse)
}
