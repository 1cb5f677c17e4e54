// Package nethttp lets a Go tool reach the network through the host, with
// net/http as usual: Transport is an http.RoundTripper that sends each
// request through the network import (abi.NetModule), and Client an
// http.Client that uses it.
//
//	resp, err := nethttp.Client().Get("https://api.example.com/v1/items")
//
// The host sends only what the module's network grant allows, journals
// every exchange, and adds the secret headers the agent file names: the
// tool never holds them. A refusal or failure is the error of RoundTrip,
// in words that say what to change. The module must declare the hosts it
// needs in its manifest (abi.Needs.Net) and be granted them.
//
// Outside wasip1 (tests on the host) RoundTrip fails with ErrNoHost.
package nethttp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/cairnrun/cairn/abi"
)

// ErrNoHost is RoundTrip's error where there is no cairn host.
var ErrNoHost = errors.New("no cairn host: the network import exists only in a module the host runs")

// Transport sends requests through the host. The zero value is ready;
// it holds no state, so it is safe for concurrent use (the host serves
// one request at a time).
type Transport struct{}

// Client is an http.Client whose requests go through Transport. It
// follows redirects as http.Client does; each hop is a request of its
// own that the host checks against the grant.
func Client() *http.Client { return &http.Client{Transport: Transport{}} }

// RoundTrip sends r through the host and returns its response, read in
// full.
//
// # Errors
//
// What the host said: a refusal by the grant, a limit, a connection that
// failed, no response within the grant's timeout; ErrNoHost outside a
// cairn module.
func (Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	in, err := encode(r)
	if err != nil {
		return nil, err
	}
	out, err := exchange(in)
	if err != nil {
		return nil, err
	}
	resp, err := abi.DecodeHTTPResponse(out)
	if err != nil {
		return nil, err
	}
	if resp.Error != "" {
		return nil, fmt.Errorf("%s %s: %s", r.Method, r.URL.Redacted(), resp.Error)
	}
	return &http.Response{
		Status: strconv.Itoa(resp.Status) + " " + http.StatusText(resp.Status), StatusCode: resp.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header(resp.Header), Body: io.NopCloser(bytes.NewReader(resp.Body)),
		ContentLength: int64(len(resp.Body)), Request: r,
	}, nil
}

// encode is r as the host reads it.
func encode(r *http.Request) ([]byte, error) {
	var body []byte
	if r.Body != nil {
		defer r.Body.Close()
		b, err := io.ReadAll(io.LimitReader(r.Body, abi.MaxNetMessage+1))
		if err != nil {
			return nil, fmt.Errorf("read the request body: %w", err)
		}
		body = b
	}
	if len(body) > abi.MaxNetMessage {
		return nil, fmt.Errorf("a request body larger than %d bytes", abi.MaxNetMessage)
	}
	url := *r.URL
	if r.Host != "" && r.Host != url.Host {
		url.Host = r.Host
	}
	return abi.Marshal(abi.HTTPRequest{ABI: abi.Version, Method: r.Method, URL: url.String(), Header: r.Header, Body: body})
}
