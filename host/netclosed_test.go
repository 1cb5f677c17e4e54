package host

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/internal/view"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// Regression: a POST whose server, over real loopback HTTP/1.1, read it
// and closed the connection in the middle of its answer's head was
// journaled with net/http's words alone ("net/http: HTTP/1.x transport
// connection broken: unexpected EOF"). It is journaled as failed, with
// what the server did: sent, and maybe acted on; the call, killed before
// its result was journaled, is sealed with the advice to check the
// remote side, not as a request the server did not process.
func TestNetConnectionClosedBeforeTheAnswerIsJournaledAsMaybeProcessed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			io.Copy(io.Discard, req.Body)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")
		}
	}()
	addr := ln.Addr().String()
	g, err := netguard.New(netguard.Rules{Allow: []string{addr}, Methods: []string{"POST"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	call := conversation.ToolCall{ID: "c1", Name: "http"}
	var recs []checkpoint.Record
	j := &netJournal{inner: g.Call(), round: 1, call: call,
		write: func(r ...checkpoint.Record) error { recs = append(recs, r...); return nil }}
	_, err = j.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "POST", URL: "http://" + addr + "/order", Body: []byte("an order")})
	if err == nil || errors.Is(err, netguard.ErrNotProcessed) || errors.Is(err, netguard.ErrNotSent) {
		t.Fatalf("the tool is told %v", err)
	}
	// The crash: the exchange's records are journaled, the call's result is not.
	if len(recs) != 2 || recs[1].Exchange.Step != conversation.ExchangeFailed {
		t.Fatalf("journaled %d records, the last %+v", len(recs), recs[len(recs)-1].Exchange)
	}
	const said = "no response: the server closed the connection in the middle of what it was sending, before an answer's head came whole: the request may have reached the remote side, which may have acted on it"
	if e := recs[1].Exchange.Error; !strings.HasPrefix(e, said) || strings.Contains(e, "EOF") {
		t.Errorf("journaled the error %q", e)
	}
	if line := view.ExchangeLine(j.done[0]); !strings.Contains(line, "→ sent, no response: "+said) {
		t.Errorf("cairn log lists %s", line)
	}
	if !sentMutating(recs) {
		t.Error("replay takes the round for one whose POST was not sent")
	}
	seal := sealOf(call, recs)
	if seal.Effects != EffectsUnknown || !strings.HasPrefix(seal.Recommendation, "check the remote side before retrying: POST http://"+addr+"/order") {
		t.Errorf("seal %+v: %s", seal, seal.message())
	}
}
