package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// maxKeptResponse is the largest response body kept in the store beside
// its exchange record; a larger one is recorded by digest and size only.
const maxKeptResponse = 1 << 20

// maxErrorText bounds an exchange's error as journaled: an error quotes
// at most the request's URL (netguard.MaxURLBytes) and a few words.
const maxErrorText = 16 << 10

// maxJournaledRefusals is how many of a call's requests refused by its
// grant are journaled; later refusals, of requests that were not sent
// either, are not, so that a tool looping on them cannot fill the journal.
const maxJournaledRefusals = 64

// netJournal is the Net of one call: it journals every exchange of the
// call around the Net it wraps (docs/network.md, "What is journaled"):
//
//	refused by the grant: a refused record; nothing was sent
//	otherwise: a requesting record, durable, before the request is sent;
//	    then the response body kept as a blob (up to maxKeptResponse),
//	    durable, and a received (or failed, with the bytes of the body
//	    read before it failed) record, durable, before the guest sees
//	    the response; or, for a request the Net says reached
//	    no peer (netguard.ErrRefused at connect time, netguard.ErrNotSent:
//	    a refused connection, a name that does not resolve), a refused
//	    record: nothing of it was sent; or, for one an HTTP/2 server said
//	    it did not process (netguard.ErrNotProcessed), an unprocessed
//	    record: it was sent, and is safe to send again
//
// So a seal knows of every request that may have left, and of every
// response the guest may have read; and it does not take for sent a
// request that never left. What a record holds of a request is bounded
// whatever the guest sends (netguard.RecordedMethod, RecordedURL,
// RecordedHeader; an error within maxErrorText), so that no call, however
// many requests it has refused, makes a record past what the journal's
// frames hold.
type netJournal struct {
	inner   sandbox.Net
	write   func(...checkpoint.Record) error
	blobs   func([]byte) (string, error)
	round   int
	call    conversation.ToolCall
	secrets []string
	seq     int
	refused int
	done    []conversation.Exchange
}

var _ sandbox.Net = (*netJournal)(nil)

// secretKeeper is a Net that knows values no record may hold. A call's
// Net is a *netguard.Client (the assertion below keeps it one: the check
// once asked the Guard's method of the Client, and nothing was redacted).
type secretKeeper interface {
	SecretValues() []string
}

var _ secretKeeper = (*netguard.Client)(nil)

// admitter is a Net that can refuse a request before anything is sent.
type admitter interface {
	Admit(*sandbox.NetRequest) error
}

// netFor returns what gives each call of a round its journaled Net.
func (r *run) netFor(round int, g *roundSync) func(conversation.ToolCall, sandbox.Net) *netJournal {
	return func(c conversation.ToolCall, inner sandbox.Net) *netJournal {
		j := &netJournal{inner: inner, write: g.write, blobs: r.blobs, round: round, call: c}
		if s, ok := inner.(secretKeeper); ok {
			j.secrets = s.SecretValues()
		}
		return j
	}
}

// errorText is err as it may be recorded: the request's URL in it (net/http
// quotes it) as recorded, no secret value, and within maxErrorText.
func (j *netJournal) errorText(err error, raw, recorded string) string {
	text := strings.ReplaceAll(err.Error(), raw, recorded)
	return netguard.Clip(netguard.RedactText(text, j.secrets...), maxErrorText)
}

// RoundTrip journals and sends one exchange.
func (j *netJournal) RoundTrip(ctx context.Context, req *sandbox.NetRequest) (*sandbox.NetResponse, error) {
	j.seq++
	ex := conversation.Exchange{Seq: j.seq, Method: netguard.RecordedMethod(req.Method), URL: netguard.RecordedURL(req.URL, j.secrets...),
		RequestHeader: netguard.RecordedHeader(req.Header, j.secrets...), RequestDigest: digestOf(req.Body), RequestSize: int64(len(req.Body))}
	if a, ok := j.inner.(admitter); ok {
		if err := a.Admit(req); err != nil {
			if j.refused++; j.refused > maxJournaledRefusals {
				return nil, err // nothing was sent; a guest looping on refusals does not fill the journal
			}
			ex.Step, ex.Error = conversation.ExchangeRefused, j.errorText(err, req.URL, ex.URL)
			return nil, j.end(ex, ex, err)
		}
	}
	ex.Step = conversation.ExchangeRequesting
	if err := j.write(j.record(ex)); err != nil {
		return nil, fmt.Errorf("the request was not sent: journal it: %w", err)
	}
	start, read := time.Now(), j.bodyBytesRead()
	resp, err := j.inner.RoundTrip(ctx, req)
	ex.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		ex.Step, ex.Error = conversation.ExchangeFailed, j.errorText(err, req.URL, ex.URL)
		ex.ResponseSize = j.bodyBytesRead() - read // received, and not given to the guest
		if errors.Is(err, netguard.ErrRefused) || errors.Is(err, netguard.ErrNotSent) {
			ex.Step = conversation.ExchangeRefused // nothing of it reached the peer
		} else if errors.Is(err, netguard.ErrNotProcessed) && ex.ResponseSize == 0 {
			ex.Step = conversation.ExchangeUnprocessed // the server said it did not act on it
		}
		return nil, j.end(ex, outcome(ex), err)
	}
	if err := j.received(&ex, resp); err != nil {
		ex.Step, ex.Error = conversation.ExchangeFailed, j.errorText(err, req.URL, ex.URL)
		return nil, j.end(ex, outcome(ex), err)
	}
	return resp, j.end(ex, outcome(ex), nil)
}

// bodyBytesRead is how many bytes of response bodies the call's Net has
// read from the network, whether or not they reached the guest; 0 for a
// Net that does not count them.
func (j *netJournal) bodyBytesRead() int64 {
	if c, ok := j.inner.(*netguard.Client); ok {
		return c.Received
	}
	return 0
}

// received fills in the response and keeps its body.
func (j *netJournal) received(ex *conversation.Exchange, resp *sandbox.NetResponse) error {
	ex.Step, ex.Status = conversation.ExchangeReceived, resp.Status
	ex.ResponseHeader = netguard.Redact(resp.Header, j.secrets...)
	ex.ResponseDigest, ex.ResponseSize = digestOf(resp.Body), int64(len(resp.Body))
	if len(resp.Body) > maxKeptResponse || j.blobs == nil {
		return nil
	}
	d, err := j.blobs(resp.Body)
	if err != nil {
		return fmt.Errorf("the response came, and could not be kept, so it was not given to the tool: %w", err)
	}
	ex.Blob = d
	return nil
}

// end journals how an exchange ended (rec, durably) and keeps ex, all of
// it, for the call's result. It returns err, or the journal's error,
// which the guest is told instead of the response.
func (j *netJournal) end(ex, rec conversation.Exchange, err error) error {
	j.done = append(j.done, ex)
	if werr := j.write(j.record(rec)); werr != nil {
		return fmt.Errorf("journal the exchange: %w", werr)
	}
	return err
}

// outcome is the part of ex a closing record carries: not the request's
// headers and body, which its requesting record has.
func outcome(ex conversation.Exchange) conversation.Exchange {
	ex.RequestHeader, ex.RequestDigest, ex.RequestSize = nil, "", 0
	return ex
}

func (j *netJournal) record(ex conversation.Exchange) checkpoint.Record {
	return checkpoint.Record{Type: checkpoint.RecExchange, Time: now(), Round: j.round, Call: j.call.ID,
		Tool: j.call.Name, Exchange: &ex}
}

// exchanges is the call's exchanges as they ended.
func (j *netJournal) exchanges() []conversation.Exchange {
	if j == nil {
		return nil
	}
	return j.done
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// journalNet wraps the call's Net in its journal; without a journal the
// call has no network.
func (ws workspaceView) journalNet(p *sandbox.Policy, c conversation.ToolCall) *netJournal {
	if p.Net == nil {
		return nil
	}
	if ws.net == nil {
		p.Net = nil
		return nil
	}
	j := ws.net(c, p.Net)
	p.Net = j
	return j
}
