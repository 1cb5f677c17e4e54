// Package model puts the models an agent talks to behind one interface.
// A Provider takes the conversation and the tool schemas and returns the
// model's whole turn: its text and the tool calls it asks for. Text streams
// to Request.OnText as it arrives, but the turn is only returned, and so
// only journaled by the host, once the model has finished it.
//
// There are three providers, chosen by Spec.Provider:
//
//   - script (script.go) plays turns from a YAML file. It is deterministic
//     and needs no network, so it is the embedded default: it runs the
//     examples, the tests and crash trials.
//   - openai (openai.go) speaks OpenAI-compatible chat completions, streamed
//     as server-sent events: api.openai.com and the servers that copy it
//     (Ollama, llama.cpp's llama-server, vLLM, LM Studio). The key comes
//     from the variable Spec.APIKeyEnv names (OPENAI_API_KEY by default)
//     and may be absent for local servers.
//   - anthropic (anthropic.go) speaks the Anthropic messages API, streamed
//     as server-sent events. The key comes from ANTHROPIC_API_KEY by default.
//
// Both network providers are written against net/http and a small
// server-sent-events reader (sse.go), not the vendors' SDKs; RATIONALE.md
// says why.
//
// # History
//
// Both network providers convert the same checkpoint types, so a run can
// switch provider or model on resume. Before each request, Normalize gives
// every tool call in the history exactly one result, placed right after the
// call's message. Tool-call arguments that are not a JSON object (the
// model's own bad JSON, kept as written in the history) are sent back as an
// object, {"_raw_arguments": "<text>"}, so that the request is accepted and
// the model can still see what it wrote.
//
// # Failures
//
// A request is retried, with exponential backoff and jitter, on 408, 409,
// 429, 5xx (529 included), a connection that fails, a stream that ends
// before the model finished its turn, and a server that keeps silent longer
// than Spec.Timeout (2 minutes by default) before its headers or between
// two reads of its answer (timeout.go); the whole request is sent again and
// nothing of the broken attempt is kept. A Retry-After (seconds or HTTP
// date) or retry-after-ms header sets the wait. Request.OnRetry hears of
// each retry before its wait. When the retries run out, or the server asks
// for a wait longer than the longest the provider will make, Complete
// returns an error wrapping ErrUnavailable, and the host pauses the run at
// its boundary. Any other 4xx wraps ErrRequest. An answer past one of the
// bounds of bounds.go and sse.go (8 MiB in a line of a stream, 16 MiB of
// text and arguments in a turn) wraps ErrTooLarge and is not retried. A
// cancelled context stops a request, a hung one included, or a wait at once
// and returns the context's error. The key is masked in every error
// (secret.go), for servers echo it.
//
// A server that ignores "stream": true and answers with one JSON document
// (Content-Type application/json) is read as well as a stream.
//
// Every provider names the end of a turn alike (Response.StopReason,
// stop.go): end_turn, tool_use, length (cut off by max_tokens) or refusal.
//
// # Usage
//
// Usage.InputTokens counts every token of the prompt, the ones read from or
// written to the provider's prompt cache included; CacheReadTokens and
// CacheWriteTokens say how many of them were. When the spec has a price
// table, Usage.CostMicroUSD is filled.
//
// Providers are safe for concurrent use.
package model
