package host

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// A round's events are few and simple (a turn, a call's start and end, the
// commit), and encoding/json's reflection over Event's thirty fields was
// most of what emitting them cost. appendEvent writes the events whose
// fields are only scalars, a Call without network use and a Usage, byte
// for byte as json.Marshal would (TestAppendEvent and FuzzAppendEvent
// compare them); every other event goes through encoding/json.

// appendEvent appends e's JSON to b, or reports that it has a field only
// encoding/json writes.
func appendEvent(b []byte, e *Event) ([]byte, bool) {
	if !plainEvent(e) || !jsonTime(e.Time) {
		return b, false
	}
	b = append(b, `{"type":`...)
	b = appendJSONString(b, string(e.Type))
	b = append(b, `,"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","agent":`...)
	b = appendJSONString(b, e.Agent)
	b = append(b, `,"run":`...)
	b = appendJSONString(b, e.Run)
	b = appendOmitString(b, `,"parent":`, e.Parent)
	b = appendOmitInt(b, `,"depth":`, int64(e.Depth))
	b = appendOmitInt(b, `,"round":`, int64(e.Round))
	b = appendOmitString(b, `,"resumed_from":`, e.ResumedFrom)
	b = appendOmitString(b, `,"text":`, e.Text)
	b = appendOmitInt(b, `,"calls":`, int64(e.Calls))
	if c := e.Call; c != nil {
		var ok bool
		if b, ok = appendCall(append(b, `,"call":`...), c); !ok {
			return b, false
		}
	}
	if u := e.Usage; u != nil {
		b = appendUsage(append(b, `,"usage":`...), u)
	}
	b = appendOmitInt(b, `,"bytes":`, e.Bytes)
	b = appendOmitInt(b, `,"messages":`, int64(e.Messages))
	b = appendOmitString(b, `,"strategy":`, e.Strategy)
	b = appendOmitString(b, `,"status":`, string(e.Status))
	b = appendOmitString(b, `,"reason":`, e.Reason)
	return append(b, '}'), true
}

// plainEvent says whether e has none of the fields appendEvent leaves to
// encoding/json.
func plainEvent(e *Event) bool {
	return e.Sealed == nil && e.Finished == nil && e.Awaiting == nil && e.Applied == nil && e.Dropped == nil &&
		e.Resumed == nil && e.Paths == nil && e.Labels == nil && e.Todos == nil && e.Compaction == nil && e.Removed == 0 &&
		(e.Call == nil || e.Call.Net == nil)
}

// jsonTime says whether t is a time encoding/json writes as RFC 3339 (a
// year it cannot is an event it leaves out).
func jsonTime(t time.Time) bool {
	_, off := t.Zone()
	return t.Year() >= 0 && t.Year() <= 9999 && off > -24*60*60 && off < 24*60*60
}

func appendCall(b []byte, c *Call) ([]byte, bool) {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, c.ID)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, c.Tool)
	b = appendOmitString(b, `,"input":`, c.Input)
	b = appendOmitString(b, `,"outcome":`, string(c.Outcome))
	b = appendOmitString(b, `,"output":`, c.Output)
	if c.DurationMS != 0 {
		var ok bool
		if b, ok = appendJSONFloat(append(b, `,"duration_ms":`...), c.DurationMS); !ok {
			return b, false
		}
	}
	if c.Unsandboxed {
		b = append(b, `,"unsandboxed":true`...)
	}
	b = appendOmitString(b, `,"stderr":`, c.Stderr)
	return append(b, '}'), true
}

func appendUsage(b []byte, u *conversation.Usage) []byte {
	b = strconv.AppendInt(append(b, `{"input_tokens":`...), u.InputTokens, 10)
	b = strconv.AppendInt(append(b, `,"output_tokens":`...), u.OutputTokens, 10)
	b = appendOmitInt(b, `,"cache_read_tokens":`, u.CacheReadTokens)
	b = appendOmitInt(b, `,"cache_write_tokens":`, u.CacheWriteTokens)
	b = appendOmitInt(b, `,"cost_micro_usd":`, u.CostMicroUSD)
	b = appendOmitInt(b, `,"net_requests":`, u.NetRequests)
	b = appendOmitInt(b, `,"net_sent_bytes":`, u.NetSentBytes)
	b = appendOmitInt(b, `,"net_received_bytes":`, u.NetReceivedBytes)
	return append(b, '}')
}

func appendOmitString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), s)
}

func appendOmitInt(b []byte, key string, n int64) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), n, 10)
}

// appendJSONFloat is encoding/json's float64: like %g, with the exponent
// cut-offs of ES6 and no padding of the exponent. Not for NaN or infinity.
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b, true
}

// appendJSONString is encoding/json's string with HTML escaped, as an
// Encoder writes it by default: <, > and & as \u00XX, control characters
// escaped, invalid UTF-8 as U+FFFD, and U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
