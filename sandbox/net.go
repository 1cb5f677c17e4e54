package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairnrun/cairn/abi"
)

// errNetDenied is a module that imports the network (abi.NetModule) run
// under a policy that grants it none (Policy.Net is nil). It wraps
// errImportDenied.
var errNetDenied = fmt.Errorf("%w: the network import without a network grant", errImportDenied)

// NetRequest is one HTTP request a call asks for through the network
// import: exactly what the guest sent, its URL as the guest wrote it.
type NetRequest struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// NetResponse is the answer to a NetRequest, its body read in full.
type NetResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// Net carries a call's HTTP exchanges: Policy.Net. The live one checks
// each request against the call's grant and sends it (sandbox/netguard);
// the host wraps it to journal every exchange; a replaying one serves
// recorded responses. A Net is made per call and is used from the one
// goroutine that runs the call.
//
// RoundTrip sends one request and returns its response; redirects are
// not followed (a 3xx is the response; the guest's client follows it with
// a new request). An error is the refusal or failure the guest is told
// of, in words it can act on; the call goes on.
type Net interface {
	RoundTrip(ctx context.Context, req *NetRequest) (*NetResponse, error)
}

// netKey is the context key of a call's netCall.
type netKey struct{}

// netCall is the network state of one call, kept in the context its
// guest code runs with: the Net, and the response that round_trip made
// and response has not yet copied out.
type netCall struct {
	net     Net
	pending []byte
}

func withNet(ctx context.Context, n Net) context.Context {
	if n == nil {
		return ctx
	}
	return context.WithValue(ctx, netKey{}, &netCall{net: n})
}

// exchange is what round_trip does with the request bytes the guest
// wrote: decode, send through the call's Net, encode the answer.
func exchange(ctx context.Context, in []byte) []byte {
	nc, _ := ctx.Value(netKey{}).(*netCall)
	return keep(nc, answer(ctx, nc, in))
}

// tooLarge is what round_trip does with a request message of size bytes,
// past abi.MaxNetMessage, that it does not read: an answer saying so.
func tooLarge(ctx context.Context, size uint32) []byte {
	nc, _ := ctx.Value(netKey{}).(*netCall)
	return keep(nc, abi.HTTPResponse{Error: fmt.Sprintf("a request message of %d bytes, more than the %d one may have (its body, URL and headers encoded); nothing was sent",
		size, abi.MaxNetMessage)})
}

// keep encodes resp and keeps it for response to copy out.
func keep(nc *netCall, resp abi.HTTPResponse) []byte {
	resp.ABI = abi.Version
	b, err := abi.Marshal(resp)
	if err == nil && len(b) > abi.MaxNetMessage {
		err = fmt.Errorf("the response is %d bytes encoded, more than %d", len(b), abi.MaxNetMessage)
	}
	if err != nil {
		b, _ = abi.Marshal(abi.HTTPResponse{ABI: abi.Version, Error: "encode the response: " + err.Error()})
	}
	if nc != nil {
		nc.pending = b
	}
	return b
}

func answer(ctx context.Context, nc *netCall, in []byte) abi.HTTPResponse {
	if nc == nil {
		return abi.HTTPResponse{Error: "this call has no network: its module may reach the network only within a call, not while it initialises"}
	}
	req, err := abi.DecodeHTTPRequest(in)
	if err != nil {
		return abi.HTTPResponse{Error: err.Error()}
	}
	resp, err := nc.net.RoundTrip(ctx, &NetRequest{Method: req.Method, URL: req.URL, Header: req.Header, Body: req.Body})
	if err != nil {
		return abi.HTTPResponse{Error: err.Error()}
	}
	if resp == nil {
		return abi.HTTPResponse{Error: errors.New("no response").Error()}
	}
	return abi.HTTPResponse{Status: resp.Status, Header: resp.Header, Body: resp.Body}
}

// noNet is the Net of a module run for its manifest: it may import the
// network, and reaches none.
type noNet struct{}

func (noNet) RoundTrip(context.Context, *NetRequest) (*NetResponse, error) {
	return nil, errors.New("no network while a module is asked for its manifest")
}
