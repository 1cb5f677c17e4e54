package host

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cairnrun/cairn/checkpoint"
)

// The first agent of a store writes its tool modules into it (define.go),
// megabytes that a start would otherwise wait for: tens of milliseconds
// with their fsyncs. A new agent's modules are written in the background
// instead, while its first request is out, and its first commit (or its
// journal's close) waits for them, so a round is never durable before the
// modules its agent runs with are. What a crash before that leaves is an
// agent whose definition names a module blob the store lacks; rebuilding
// it then takes the module from where the agent file found it (built into
// cairn, or its file) when its bytes still have that digest (see
// moduleBlob). Rebuilding only reads, since a manual resume, Ask and the
// checks before a lock rebuild agents too and must change nothing; a run
// that goes on to write the agent stores such modules (storeRebuilt).

// blobWrites are the module blobs a new agent writes in the background,
// one after another, from when its first request is on its way (the same
// moment its modules start loading, see loadingProvider): written sooner,
// their fsyncs would queue the start's own small ones behind them.
type blobWrites struct {
	store checkpoint.Store
	queue []blobWrite
	once  sync.Once
	done  chan struct{}
	err   error
}

func newBlobWrites(store checkpoint.Store) *blobWrites {
	return &blobWrites{store: store, done: make(chan struct{})}
}

// blobWrite is the bytes to write, read when written (a module's, from
// its file), and the digest they must have.
type blobWrite struct {
	data   func() ([]byte, error)
	digest string
}

// put queues the bytes data returns, whose digest must be digest, to be
// written into the store.
func (w *blobWrites) put(data func() ([]byte, error), digest string) {
	w.queue = append(w.queue, blobWrite{data, digest})
}

// start begins the writes, once; nothing is queued after it.
func (w *blobWrites) start() {
	w.once.Do(func() {
		go func() {
			defer close(w.done)
			var errs []error
			for _, b := range w.queue {
				data, err := b.data()
				digest := ""
				if err == nil {
					digest, err = w.store.PutBlob(data)
				}
				if err == nil && digest != b.digest {
					err = fmt.Errorf("a module kept as %s: %w", b.digest, errModuleChanged)
				}
				if err != nil {
					errs = append(errs, err)
				}
			}
			w.queue = nil
			if err := errors.Join(errs...); err != nil {
				w.err = fmt.Errorf("store the agent's tool modules: %w", err)
			}
		}()
	})
}

// wait starts the writes if they have not started and returns once they
// have ended, with their error.
func (w *blobWrites) wait() error {
	w.start()
	<-w.done
	return w.err
}

// afterBlobs is a new agent's journal whose commits wait for its module
// blobs first.
type afterBlobs struct {
	checkpoint.Log
	writes *blobWrites
	once   sync.Once
	err    error
}

func (l *afterBlobs) written() error {
	l.once.Do(func() { l.err = l.writes.wait() })
	return l.err
}

func (l *afterBlobs) Commit(recs ...checkpoint.Record) (int64, error) {
	if err := l.written(); err != nil {
		return 0, err
	}
	return l.Log.Commit(recs...)
}

func (l *afterBlobs) Close() error { return errors.Join(l.written(), l.Log.Close()) }

// hasBlob says whether the store keeps digest, for a store that can tell
// without reading it (checkpoint.FileStore); ok is false for one that
// cannot.
func hasBlob(store checkpoint.Store, digest string) (has, ok bool) {
	s, ok := store.(interface{ HasBlob(string) bool })
	if !ok {
		return false, false
	}
	return s.HasBlob(digest), true
}

// ErrModuleFileChanged: a stored agent's module is missing from the store
// (a crash before its background write ended, or the blob removed) and the
// file its agent file names holds other bytes now, so the agent cannot be
// rebuilt as it started. Resuming it with ResumeOptions.Upgrade (`cairn
// resume --upgrade`) goes on with the module as the file has it now.
var ErrModuleFileChanged = errors.New("its file holds other bytes now")

// moduleBlob is the module ref of a stored agent, by digest: from the
// store, or when the store lacks it or its blob is damaged (its content
// not its digest), from where af finds the module, if its bytes have that
// digest; damaged says it was. It writes nothing.
//
// # Errors
//
// The store's: its checkpoint.ErrNotFound or checkpoint.ErrCorrupt, with
// ErrModuleFileChanged when the module's file holds other bytes.
func (e *Engine) moduleBlob(af *AgentFile, ref ToolRef, digest string) (wasm []byte, damaged bool, err error) {
	wasm, err = e.store.Blob(digest)
	damaged = errors.Is(err, checkpoint.ErrCorrupt)
	if !damaged && !errors.Is(err, checkpoint.ErrNotFound) {
		return wasm, false, err
	}
	again, rerr := readModule(af, ref)
	if rerr != nil {
		return nil, false, err
	}
	if digestOf(again) != digest {
		return nil, false, fmt.Errorf("%w, and %w", err, ErrModuleFileChanged)
	}
	return again, damaged, nil
}

// storeRebuilt stores the modules of an agent rebuilt from def (mods, as
// rebuild returns them) that its store lacks, or keeps damaged, which
// moduleBlob found in their sources: a run that writes the agent calls it
// before its first write, so that no round is committed without the
// modules it ran with. A damaged one stored again is noted in its
// toolModule, which the run warns of (see toolset.newWarnings).
func (e *Engine) storeRebuilt(def checkpoint.Definition, mods []toolModule) error {
	for i, m := range mods {
		digest := def.Modules[m.Ref.Module]
		if !m.damaged {
			if has, ok := hasBlob(e.store, digest); has || (!ok && e.keeps(digest)) {
				continue
			}
		}
		wasm, err := m.bytes()
		if err == nil {
			_, err = e.store.PutBlob(wasm)
		}
		if err != nil {
			return fmt.Errorf("store module %s of the agent: %w", m.Ref.Module, err)
		}
		if m.damaged {
			mods[i].note = fmt.Sprintf("tool module %s: its blob %s in the store was damaged (its content did not match its digest); it was stored again from %s",
				m.Ref.Module, digest, m.source())
		}
	}
	return nil
}

// keeps says whether the store has the blob digest, for a store that
// cannot tell without reading it.
func (e *Engine) keeps(digest string) bool {
	_, err := e.store.Blob(digest)
	return !errors.Is(err, checkpoint.ErrNotFound)
}
