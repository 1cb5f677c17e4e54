package checkpoint

// ExchangeStep is how far one HTTP exchange of a call got.
type ExchangeStep string

// The steps of an exchange. A call's exchange is journaled as
// ExchangeRequesting, durably, before its request is sent, then as one of
// the others before the guest sees what came of it. So an exchange whose
// last record is ExchangeRequesting may have reached the remote side.
const (
	// ExchangeRequesting: the request is about to be sent.
	ExchangeRequesting ExchangeStep = "requesting"
	// ExchangeReceived: its response came back and is recorded.
	ExchangeReceived ExchangeStep = "received"
	// ExchangeFailed: the request was sent, or began to be, and no
	// response came back whole (a refused connection, a timeout, a body
	// past its limit): whether the remote side acted on it is unknown.
	ExchangeFailed ExchangeStep = "failed"
	// ExchangeRefused: the grant refused the request before anything was
	// sent (a host not allowed, a method, a limit).
	ExchangeRefused ExchangeStep = "refused"
)

// Exchange is one step of one HTTP exchange of a call (RecExchange). The
// requesting step carries the request, the others the outcome; Seq ties
// them together. Headers are as the guest sent them and the server
// answered, with secret values redacted (docs/network.md); the secrets the
// host adds to a request are never recorded.
type Exchange struct {
	// Seq numbers the call's exchanges from 1.
	Seq  int          `cbor:"1,keyasint" json:"seq"`
	Step ExchangeStep `cbor:"2,keyasint" json:"step"`
	// The request: method, URL (without credentials), headers, and the
	// body's sha256 digest and size.
	Method        string              `cbor:"3,keyasint,omitempty" json:"method,omitempty"`
	URL           string              `cbor:"4,keyasint,omitempty" json:"url,omitempty"`
	RequestHeader map[string][]string `cbor:"5,keyasint,omitempty" json:"request_header,omitempty"`
	RequestDigest string              `cbor:"6,keyasint,omitempty" json:"request_digest,omitempty"`
	RequestSize   int64               `cbor:"7,keyasint,omitempty" json:"request_size,omitempty"`
	// The response: status, headers, the body's digest and size, and
	// Blob, the digest under which the body is kept in the store's blobs
	// ("" when it was past the size kept; then only digest and size).
	Status         int                 `cbor:"8,keyasint,omitempty" json:"status,omitempty"`
	ResponseHeader map[string][]string `cbor:"9,keyasint,omitempty" json:"response_header,omitempty"`
	ResponseDigest string              `cbor:"10,keyasint,omitempty" json:"response_digest,omitempty"`
	ResponseSize   int64               `cbor:"11,keyasint,omitempty" json:"response_size,omitempty"`
	Blob           string              `cbor:"12,keyasint,omitempty" json:"blob,omitempty"`
	// Error says why a failed or refused exchange has no response.
	Error      string  `cbor:"13,keyasint,omitempty" json:"error,omitempty"`
	DurationMS float64 `cbor:"14,keyasint,omitempty" json:"duration_ms,omitempty"`
}

// Sent reports whether the step says the request may have left: every
// step but a refusal.
func (e Exchange) Sent() bool { return e.Step != ExchangeRefused }

// Mutating reports whether the exchange's method is one that is not safe
// to repeat blindly: POST, PUT, PATCH, DELETE (or any method not known to
// be safe).
func (e Exchange) Mutating() bool {
	switch e.Method {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		return false
	}
	return true
}

// markExchanges marks the response bodies the exchanges of messages and
// of an interrupted round's records keep, so that Collect keeps them.
func markExchanges(messages []Message, tail []Record, inUse map[string]bool) {
	for _, m := range messages {
		for _, e := range m.Net {
			if e.Blob != "" {
				inUse[e.Blob] = true
			}
		}
	}
	for _, r := range tail {
		if r.Exchange != nil && r.Exchange.Blob != "" {
			inUse[r.Exchange.Blob] = true
		}
	}
}
