package checkpoint

import "github.com/cairnrun/cairn/checkpoint/conversation"

// markExchanges marks the response bodies the exchanges of messages and
// of an interrupted round's records keep, so that Collect keeps them.
func markExchanges(messages []conversation.Message, tail []Record, inUse map[string]bool) {
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
