package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/internal/plural"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// netReplay is the Net of a call verify runs again: it sends nothing. It
// serves the call's recorded exchanges in order — the recorded response,
// its body from the store, or the recorded refusal or failure — and notes
// a divergence when the guest sends another request than the one
// recorded at that place, or more requests than were recorded.
//
// The call's journal kept only its first maxJournaledRefusals refusals by
// the grant. So the replay asks the call's grant (grant, the guard of the
// tool's entry in the agent file) about every request, and counts its
// refusals as the journal did: past that many, a request the grant refuses
// is one the journal did not keep, and it is refused as the grant refuses
// it, whichever request it is; before, it must be the refusal recorded
// next.
type netReplay struct {
	store    checkpoint.Store
	recorded []conversation.Exchange
	mu       sync.Mutex
	grant    admitter // nil: every request is served as recorded
	next     int      // the recorded exchange the next request is compared with
	refused  int      // requests the grant refused
	beyond   int      // requests sent past the recorded ones
	extra    string   // the first of them
	divs     []Divergence
}

var _ sandbox.Net = (*netReplay)(nil)

// errNotReplayed is what the guest is told for a request verify cannot
// answer from the recording.
var errNotReplayed = errors.New("cairn verify: this request is not the one recorded here, and verify sends nothing")

// Admit refuses, as recorded, a request the grant refused before
// anything was sent, and, past the refusals the journal kept, as the
// grant refuses it.
func (n *netReplay) Admit(req *sandbox.NetRequest) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.grant == nil {
		return nil // RoundTrip serves what was recorded
	}
	err := n.grant.Admit(req)
	if err == nil {
		return nil // sent, or refused when it was: RoundTrip serves what was recorded
	}
	if n.refused++; n.refused > maxJournaledRefusals {
		return err // a refusal the journal did not keep
	}
	return n.recordedRefusal(req)
}

// recordedRefusal serves the refusal recorded next, which req must be.
func (n *netReplay) recordedRefusal(req *sandbox.NetRequest) error {
	ex := n.take(req)
	switch {
	case ex == nil:
		return errNotReplayed
	case ex.Step != conversation.ExchangeRefused:
		n.divs = append(n.divs, Divergence{Kind: DivergeHTTP, Path: exchangeName(ex),
			Detail: "the grant refuses the request now; it was not refused when recorded (" + string(ex.Step) + ")"})
		return errNotReplayed
	}
	return errors.New(ex.Error)
}

// RoundTrip serves the recorded answer of the request.
func (n *netReplay) RoundTrip(_ context.Context, req *sandbox.NetRequest) (*sandbox.NetResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ex := n.take(req)
	switch {
	case ex == nil:
		return nil, errNotReplayed
	case ex.Step != conversation.ExchangeReceived:
		return nil, errors.New(ex.Error)
	case ex.Blob == "" && ex.ResponseSize > 0:
		n.diverge(ex.Seq, "", "its response body was not kept (past the size kept), so it cannot be served")
		return nil, errNotReplayed
	}
	body, err := sizedBlob(n.store, ex.Blob, ex.ResponseSize)
	if err != nil {
		n.divs = append(n.divs, Divergence{Kind: DivergeHTTP, Path: exchangeName(ex), Recorded: ex.Blob,
			Detail: "the recorded response body is " + missingOrChanged(err)})
		return nil, errNotReplayed
	}
	return &sandbox.NetResponse{Status: ex.Status, Header: http.Header(ex.ResponseHeader), Body: body}, nil
}

// sizedBlob is the blob stored under digest, recorded as size bytes, for
// verify: "" is no bytes. A file store's blob is checked against that size
// before it is read: a file of another size is not the content recorded,
// and reading it (a sparse file of gigabytes, say) would only cost memory.
//
// # Errors
//
// Those of Store.Blob; a *checkpoint.CorruptError for a blob of another
// size.
func sizedBlob(s checkpoint.Store, digest string, size int64) ([]byte, error) {
	if digest == "" {
		return nil, nil
	}
	hexSum, ok := strings.CutPrefix(digest, "sha256:")
	fs, isFiles := s.(*checkpoint.FileStore)
	if ok && isFiles && len(hexSum) == 64 && !strings.ContainsAny(hexSum, `/\.`) {
		// The blob's file, as checkpoint's package doc lays the store out.
		fi, err := os.Stat(filepath.Join(fs.Dir(), "blobs", "sha256", hexSum))
		if err == nil && fi.Mode().IsRegular() && fi.Size() != size {
			return nil, &checkpoint.CorruptError{File: "blob " + digest,
				Reason: fmt.Sprintf("%d bytes, where %d were recorded; it was not read", fi.Size(), size)}
		}
	}
	return s.Blob(digest)
}

// take is the recorded exchange at the request's place when the request
// is the one recorded there; else it notes the divergence and returns nil.
// A request past the recorded ones is counted, and finish notes it.
func (n *netReplay) take(req *sandbox.NetRequest) *conversation.Exchange {
	if n.next >= len(n.recorded) {
		if n.beyond++; n.beyond == 1 {
			n.extra = fmt.Sprintf("%s %s", netguard.RecordedMethod(req.Method), netguard.RecordedURL(req.URL))
		}
		return nil
	}
	ex := &n.recorded[n.next]
	n.next++
	if why := sameRequest(ex, req); why != "" {
		n.divs = append(n.divs, Divergence{Kind: DivergeHTTP, Path: exchangeName(ex), Detail: "request " + why,
			Replayed: fmt.Sprintf("%s %s", netguard.RecordedMethod(req.Method), netguard.RecordedURL(req.URL))})
		return nil
	}
	return ex
}

// sameRequest says how req differs from the recorded request, or "".
// Method, URL and headers are compared as the journal keeps them
// (netguard's Recorded forms: redacted, bounded); no headers and empty
// headers are the same, and any other difference is one.
func sameRequest(ex *conversation.Exchange, req *sandbox.NetRequest) string {
	switch {
	case ex.Method != netguard.RecordedMethod(req.Method):
		return "method differs"
	case ex.URL != netguard.RecordedURL(req.URL):
		return "URL differs"
	case ex.RequestDigest != "" && ex.RequestDigest != digestOf(req.Body):
		return "body differs"
	case !sameHeader(ex.RequestHeader, netguard.RecordedHeader(req.Header)):
		return "headers differ"
	}
	return ""
}

// sameHeader reports whether two recorded headers are the same, nil and
// empty alike.
func sameHeader(a, b map[string][]string) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

// finish notes the recorded requests the call did not send again, and
// the requests it sent past those recorded.
func (n *netReplay) finish() []Divergence {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.next < len(n.recorded) {
		n.divs = append(n.divs, Divergence{Kind: DivergeHTTP, Path: exchangeName(&n.recorded[n.next]),
			Detail: fmt.Sprintf("the call sent %s; %d were recorded", plural.Count(n.next, "request"), len(n.recorded))})
	}
	if n.beyond > 0 {
		n.diverge(len(n.recorded)+1, n.extra, fmt.Sprintf("the call sent more requests than were recorded: %d past the %d recorded",
			n.beyond, len(n.recorded)))
	}
	return n.divs
}

func (n *netReplay) diverge(seq int, replayed, detail string) {
	n.divs = append(n.divs, Divergence{Kind: DivergeHTTP, Path: fmt.Sprintf("request %d", seq), Replayed: replayed, Detail: detail})
}

// exchangeName names a recorded exchange in a divergence.
func exchangeName(ex *conversation.Exchange) string {
	return fmt.Sprintf("request %d (%s %s)", ex.Seq, ex.Method, ex.URL)
}

// replayNet gives each call verify runs the replaying Net, journaling
// nothing, in place of the live one.
// The live Net, the guard of the tool's grant, sends nothing: the replay
// asks it only whether the grant admits a request.
func replayNet(n *netReplay) func(conversation.ToolCall, sandbox.Net) *netJournal {
	return func(c conversation.ToolCall, grant sandbox.Net) *netJournal {
		if a, ok := grant.(admitter); ok {
			n.mu.Lock()
			n.grant = a
			n.mu.Unlock()
		}
		return &netJournal{inner: n, write: func(...checkpoint.Record) error { return nil }, call: c}
	}
}

// withoutSecrets is ref with no secret values in its network grant: a
// replay sends nothing, so it needs none, and their variables need not be
// set. Each secret keeps its host and header, with a value read from no
// variable: the grant refuses what it refused when the call ran (a plain
// http request that would carry the secret), and counts it among the
// call's refusals as the journal did.
func withoutSecrets(ref ToolRef) ToolRef {
	if ref.Grant == nil || ref.Grant.Net == nil || len(ref.Grant.Net.Secrets) == 0 {
		return ref
	}
	g := *ref.Grant
	net := *g.Net
	net.Secrets = make([]NetSecret, len(g.Net.Secrets))
	for i, s := range g.Net.Secrets {
		net.Secrets[i] = NetSecret{Host: s.Host, Header: s.Header, Value: unsetSecret}
	}
	g.Net = &net
	ref.Grant = &g
	return ref
}

// unsetSecret is a secret's value in the grant verify asks: no request
// is sent with it, and no variable is read for it.
const unsetSecret = "not-sent-by-verify"
