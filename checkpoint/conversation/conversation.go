// Package conversation holds the types of an agent's conversation with its
// model: the messages, the tool calls the model asked for, the tokens they
// cost, and what each call did beyond its text (the HTTP exchanges it made,
// and the recording `cairn verify` runs it again from). They are what an
// embedder reads of a conversation, what the journal stores (hence the CBOR
// keys) and what model providers convert to and from their wire formats.
// The package imports nothing of cairn's, so every layer shares it.
package conversation

import "io/fs"

// Role says who wrote a message.
type Role string

// The roles of a conversation's messages.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // the result of one tool call
)

// Message is one entry of the conversation. The system prompt is not a
// message: it belongs to the agent file.
type Message struct {
	Role Role `cbor:"1,keyasint" json:"role"`
	// Text is the user's prompt, the assistant's text or the tool's output.
	Text string `cbor:"2,keyasint,omitempty" json:"text,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `cbor:"3,keyasint,omitempty" json:"tool_calls,omitempty"`
	// CallID and ToolName say which call a tool message answers.
	CallID   string `cbor:"4,keyasint,omitempty" json:"call_id,omitempty"`
	ToolName string `cbor:"5,keyasint,omitempty" json:"tool_name,omitempty"`
	// IsError marks a tool message that reports a failed call.
	IsError bool `cbor:"6,keyasint,omitempty" json:"is_error,omitempty"`
	// Note marks a user message that cairn wrote, not the user: news of
	// files changed outside the agent. It does not start a new task.
	Note bool `cbor:"7,keyasint,omitempty" json:"note,omitempty"`
	// EffectsUnknown marks a tool message that resume wrote for a call in
	// flight at a stop whose effects are unknown: a call of a tool outside
	// the sandbox, or one that sent a request not safe to repeat (see
	// checkpoint.Result.EffectsUnknown).
	EffectsUnknown bool `cbor:"8,keyasint,omitempty" json:"effects_unknown,omitempty"`
	// Net is what a tool message's call sent and received over the
	// network, one entry per exchange.
	Net []Exchange `cbor:"55,keyasint,omitempty" json:"net,omitempty"`
	// Recording is what the call a tool message answers ran with, for
	// `cairn verify`; it is not part of the conversation.
	Recording *Recording `cbor:"60,keyasint,omitempty" json:"-"`
}

// ToolCall is one call the model asked for.
type ToolCall struct {
	// ID is the call's id, as the model provider gave it or as cairn made
	// it; stable across restarts.
	ID   string `cbor:"1,keyasint" json:"id"`
	Name string `cbor:"2,keyasint" json:"name"`
	// Input is the arguments as JSON text, exactly as the model wrote them
	// (which may not be valid JSON).
	Input string `cbor:"3,keyasint" json:"input"`
}

// Usage counts tokens, and the HTTP requests tool calls sent through the
// network import with their bytes. Cost is in millionths of a US dollar,
// zero when no price is known.
type Usage struct {
	InputTokens      int64 `cbor:"1,keyasint,omitempty" json:"input_tokens"`
	OutputTokens     int64 `cbor:"2,keyasint,omitempty" json:"output_tokens"`
	CacheReadTokens  int64 `cbor:"3,keyasint,omitempty" json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `cbor:"4,keyasint,omitempty" json:"cache_write_tokens,omitempty"`
	CostMicroUSD     int64 `cbor:"5,keyasint,omitempty" json:"cost_micro_usd,omitempty"`
	// NetRequests counts the requests that were sent, or began to be (a
	// refused one, or one that reached no peer, is not); NetSentBytes and
	// NetReceivedBytes their bodies' bytes.
	NetRequests      int64 `cbor:"6,keyasint,omitempty" json:"net_requests,omitempty"`
	NetSentBytes     int64 `cbor:"7,keyasint,omitempty" json:"net_sent_bytes,omitempty"`
	NetReceivedBytes int64 `cbor:"8,keyasint,omitempty" json:"net_received_bytes,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		CostMicroUSD:     u.CostMicroUSD + v.CostMicroUSD,
		NetRequests:      u.NetRequests + v.NetRequests,
		NetSentBytes:     u.NetSentBytes + v.NetSentBytes,
		NetReceivedBytes: u.NetReceivedBytes + v.NetReceivedBytes,
	}
}

// AddNet returns u with the requests of a call's exchanges added.
func (u Usage) AddNet(exs []Exchange) Usage {
	for _, e := range exs {
		if e.Sent() {
			u.NetRequests++
			u.NetSentBytes += e.RequestSize
			u.NetReceivedBytes += e.ResponseSize
		}
	}
	return u
}

// Total is the number of tokens in and out.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// ExchangeStep is how far one HTTP exchange of a call got.
type ExchangeStep string

// The steps of an exchange. A call's exchange is journaled as
// ExchangeRequesting, durably, before its request is sent, then as one of
// the others before the guest sees what came of it. So an exchange whose
// last record is ExchangeRequesting may have reached the remote side; one
// whose last record is ExchangeRefused did not, requesting record or not.
const (
	// ExchangeRequesting: the request is about to be sent.
	ExchangeRequesting ExchangeStep = "requesting"
	// ExchangeReceived: its response came back and is recorded.
	ExchangeReceived ExchangeStep = "received"
	// ExchangeFailed: the request was sent, or began to be (a connection
	// was obtained for it), and no response came back whole (a reset, a
	// timeout, a body past its limit): whether the remote side acted on it
	// is unknown.
	ExchangeFailed ExchangeStep = "failed"
	// ExchangeRefused: the request was not sent. The grant refused it
	// before anything was sent (a host not allowed, a method, a limit), or
	// refused the address it resolved to at connect time; or it reached
	// no peer: no connection was obtained for it (a refused connection, a
	// name that does not resolve, a failed TLS handshake), which its Error
	// says ("not sent: no connection: ..."). A journal written before
	// such requests were told apart has ExchangeFailed for them, and they
	// read as sent, as they did then.
	ExchangeRefused ExchangeStep = "refused"
	// ExchangeUnprocessed: the request reached an HTTP/2 server, which
	// said it did not process it (netguard.ErrNotProcessed: its stream
	// reset with REFUSED_STREAM, or a GOAWAY naming an earlier request as
	// the last processed), and no byte of an answer came: it was sent,
	// and counts as sent, but the remote side did not act on it, so it is
	// safe to send again, and a seal takes it so. A journal written
	// before such requests were told apart has ExchangeFailed for them,
	// and they read as failed, as they did then.
	ExchangeUnprocessed ExchangeStep = "unprocessed"
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
// step but a refusal (which includes a request that reached no peer).
func (e Exchange) Sent() bool { return e.Step != ExchangeRefused }

// Mutating reports whether the exchange's method is one that is not safe
// to repeat blindly: POST, PUT, PATCH, DELETE (or any method not known to
// be safe). It judges Method alone: a seal judges a request by the
// stricter of its method and the methods its override headers
// (X-HTTP-Method-Override...) ask for, each by this rule.
func (e Exchange) Mutating() bool {
	switch e.Method {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		return false
	}
	return true
}

// Recording is what one sandboxed call ran with and came to, kept so that
// `cairn verify` can run the call again in a fresh instance and compare.
// It travels in the call's Result (key 60) and, once its round commits,
// in the tool message that answers the call (key 60), so that compacting
// the journal into a snapshot keeps it.
//
// The files a call saw are named by the digest of their content; with the
// agent file's `record: reads` their content is kept in the store too
// (PutBlob, so one content is stored once however many calls read it). The module is named by the digest its bytes are stored
// under (the agent's Definition keeps them).
type Recording struct {
	// Round is the round the call ran in.
	Round int `cbor:"1,keyasint"`
	// Module is the blob digest of the tool module's bytes; Ref is the
	// module as the agent file names it ("builtin" or a path).
	Module string `cbor:"2,keyasint"`
	Ref    string `cbor:"3,keyasint,omitempty"`
	// Policy is a digest of the sandbox policy the call ran under (limits,
	// mounts, clock, randomness, imports, environment names).
	Policy string `cbor:"4,keyasint,omitempty"`
	// RealClock and RealRandom say the call was granted the host's clock
	// or random source: such a call need not give the same result twice.
	// Otherwise its clock is the sandbox's fixed one and its randomness
	// the sandbox's, seeded with Seed.
	RealClock  bool  `cbor:"5,keyasint,omitempty"`
	RealRandom bool  `cbor:"6,keyasint,omitempty"`
	Seed       int64 `cbor:"7,keyasint,omitempty"`
	// Files is what the call saw of its workspace, sorted by path.
	Files []SeenFile `cbor:"8,keyasint,omitempty"`
	// Output is the SHA-256 of the text the call answered (its output,
	// or its error); IsError says which.
	Output  [32]byte `cbor:"9,keyasint"`
	IsError bool     `cbor:"10,keyasint,omitempty"`
	// Effects is the call's effect manifest as the sandbox encodes it,
	// before the round settled it.
	Effects []byte `cbor:"11,keyasint,omitempty"`
	// Outside lists what the call could read that is not recorded: the
	// guest paths of mounts outside the workspace, environment names.
	Outside []string `cbor:"12,keyasint,omitempty"`
}

// SeenFile is one path of the workspace as a call saw it: a directory, or
// a regular file with its size and permission and, when the call read it
// or changed it, its content's digest (as BlobDigest makes it). Kept says
// the content is in the store under Digest (the agent file's `record:
// reads`). A file the call only listed or looked at has no Digest: its
// content did not reach the call.
type SeenFile struct {
	Path   string      `cbor:"1,keyasint"`
	Dir    bool        `cbor:"2,keyasint,omitempty"`
	Size   int64       `cbor:"3,keyasint,omitempty"`
	Mode   fs.FileMode `cbor:"4,keyasint,omitempty"`
	Digest string      `cbor:"5,keyasint,omitempty"`
	Kept   bool        `cbor:"6,keyasint,omitempty"`
}
