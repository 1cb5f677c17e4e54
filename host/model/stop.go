package model

// Both network providers and the script name the end of a turn the same
// way (the Stop constants); these map each wire format's names to them.

// openAIStop names an OpenAI finish reason. A finish of "stop" with tool
// calls is a request for them (some servers say "stop" there); "length"
// stays StopLength even when the turn holds a call, whose arguments the
// bound may have cut off; the provider's content filter is a refusal.
func openAIStop(reason string, calls int) string {
	switch reason {
	case "length":
		return StopLength
	case "content_filter":
		return StopRefusal
	case "tool_calls", "function_call":
		return StopToolUse
	case "stop", "":
		if calls > 0 {
			return StopToolUse
		}
		return StopEndTurn
	}
	return reason
}

// anthropicStop names an Anthropic stop_reason. A full context window
// cuts the turn off like its max_tokens; a stop sequence (cairn sets none)
// ends it.
func anthropicStop(reason string, calls int) string {
	switch reason {
	case "max_tokens", "model_context_window_exceeded":
		return StopLength
	case "refusal":
		return StopRefusal
	case "tool_use":
		return StopToolUse
	case "end_turn", "stop_sequence", "":
		if calls > 0 && reason == "" {
			return StopToolUse
		}
		return StopEndTurn
	}
	return reason
}
