package checkpoint

// The conversation types are part of the loop state, so they live here, at
// the bottom of the import graph; model providers convert them to and from
// their wire formats.

// Role says who wrote a message.
type Role string

// The roles of a conversation.
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

// Usage counts tokens. Cost is in millionths of a US dollar, zero when no
// price is known.
type Usage struct {
	InputTokens      int64 `cbor:"1,keyasint,omitempty" json:"input_tokens"`
	OutputTokens     int64 `cbor:"2,keyasint,omitempty" json:"output_tokens"`
	CacheReadTokens  int64 `cbor:"3,keyasint,omitempty" json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `cbor:"4,keyasint,omitempty" json:"cache_write_tokens,omitempty"`
	CostMicroUSD     int64 `cbor:"5,keyasint,omitempty" json:"cost_micro_usd,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		CostMicroUSD:     u.CostMicroUSD + v.CostMicroUSD,
	}
}

// Total is the number of tokens in and out.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }
