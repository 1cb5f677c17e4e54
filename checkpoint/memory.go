package checkpoint

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Fact is one short fact in a memory namespace: what an agent stored
// under a key, and which agent, round and call stored it.
type Fact struct {
	Key   string    `cbor:"1,keyasint"`
	Text  string    `cbor:"2,keyasint"`
	Agent string    `cbor:"3,keyasint,omitempty"`
	Round int       `cbor:"4,keyasint,omitempty"`
	Call  string    `cbor:"5,keyasint,omitempty"`
	Time  time.Time `cbor:"6,keyasint"`
}

// Limits of a fact: a key names one file of the file store, and memory is
// for short facts, not documents.
const (
	maxFactKey  = 100
	maxFactText = 4096
)

// Memory keeps facts that outlive an agent's session, in namespaces that
// agents share by naming the same one. Facts are keyed: remembering a key
// again replaces its fact, so applying one write twice stores it once.
// FileStore, MemStore and pgstore implement it.
type Memory interface {
	// Remember stores f in namespace ns, replacing the fact of the same
	// key; it is durable when Remember returns.
	Remember(ns string, f Fact) error
	// Recall returns the namespace's facts, sorted by key; none for a
	// namespace that has none.
	Recall(ns string) ([]Fact, error)
	// Forget removes a fact: ErrNotFound if the namespace has no such key.
	Forget(ns, key string) error
	// Namespaces lists the namespaces that hold facts, sorted.
	Namespaces() ([]string, error)
}

var (
	_ Memory = (*FileStore)(nil)
	_ Memory = (*MemStore)(nil)
)

// checkFact refuses a fact that cannot be stored: an empty, too long or
// non-UTF-8 key, or a text longer than maxFactText.
func checkFact(f Fact) error {
	switch {
	case f.Key == "" || len(f.Key) > maxFactKey || !utf8.ValidString(f.Key):
		return fmt.Errorf("fact key %q: want 1 to %d bytes of UTF-8", f.Key, maxFactKey)
	case len(f.Text) > maxFactText:
		return fmt.Errorf("fact %q: %d bytes of text, at most %d; store a shorter fact", f.Key, len(f.Text), maxFactText)
	}
	return nil
}

// CheckMemoryNamespace refuses a memory namespace that could not name one
// directory of the file store.
func CheckMemoryNamespace(ns string) error {
	if err := CheckID(ns); err != nil {
		return fmt.Errorf("memory namespace %q: want 1 to 128 of letters, digits, '.', '_' and '-', not starting with '.'", ns)
	}
	return nil
}

// EncodeFact encodes a fact, refusing a key or a text out of bounds.
func EncodeFact(f Fact) ([]byte, error) {
	if err := checkFact(f); err != nil {
		return nil, err
	}
	return encMode.Marshal(f)
}

// DecodeFact decodes a fact kept by EncodeFact; where names it in errors.
func DecodeFact(where string, data []byte) (Fact, error) {
	var f Fact
	if err := decMode.Unmarshal(data, &f); err != nil {
		return f, &CorruptError{File: where, Reason: "fact: " + err.Error()}
	}
	if err := checkFact(f); err != nil {
		return f, &CorruptError{File: where, Reason: err.Error()}
	}
	return f, nil
}

// ErrNoMemory: the store keeps no memory (it does not implement Memory).
var ErrNoMemory = errors.New("this store keeps no memory")
