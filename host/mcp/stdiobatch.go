package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
)

// A stdio server may answer a request in a JSON-RPC batch, a line that
// is a JSON array (the SDK's client reads each member as if sent alone).
// One past the limit of an answer is read to its end without being kept
// (frames), its members' ids found as it is read (batchScan): each
// response in it to a request the client sent is replaced by an error
// response (dropCode), as a single answer past the limit is, with the id
// spelled as the request spelled it (a server may write 7.0 for 7). The
// client's requests are known by what it writes (asked).

// maxAsked is how many of the client's latest requests asked keeps: more
// than the client has in flight at once, so that an answer to any of
// them in a batch past the limit is replaced.
const maxAsked = 1024

// asked is the ids of the client's latest requests to a stdio server, as
// it wrote them, by their value. It is safe for concurrent use.
type asked struct {
	mu    sync.Mutex
	ids   map[any]json.RawMessage // by idKey
	order []any                   // the keys, oldest first
}

// write notes the id of msg, a message the client writes, if it is a
// request.
func (a *asked) write(msg []byte) {
	if a == nil {
		return
	}
	var m struct {
		ID     json.RawMessage
		Method *string
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == nil {
		return
	}
	key, ok := idKey(m.ID)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ids == nil {
		a.ids = map[any]json.RawMessage{}
	}
	if _, in := a.ids[key]; !in {
		if len(a.order) == maxAsked {
			delete(a.ids, a.order[0])
			a.order = a.order[1:]
		}
		a.order = append(a.order, key)
	}
	a.ids[key] = bytes.Clone(m.ID)
}

// spelled is the id of the client's request that id, a response's,
// answers, as the request spelled it.
func (a *asked) spelled(id json.RawMessage) (json.RawMessage, bool) {
	key, ok := idKey(id)
	if !ok {
		return nil, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	own, ok := a.ids[key]
	return own, ok
}

// idKey is id by its value, as sameID compares ids: a string, or a number
// as a float64.
func idKey(id json.RawMessage) (any, bool) {
	var v any
	if len(id) == 0 || json.Unmarshal(id, &v) != nil {
		return nil, false
	}
	switch v.(type) {
	case string, float64:
		return v, true
	}
	return nil, false
}

// dropBatchLines is the error responses (dropCode), a line each, that take
// the place of a batch of size bytes, over limit, whose responses s found
// (s.batch): one to each request of the client's they answer, spelled as
// the request spelled its id; nil for none.
func (a *asked) dropBatchLines(s *messageScan, size, limit int) []byte {
	if a == nil || s.lead != '[' {
		return nil
	}
	var out []byte
	done := map[string]bool{}
	for _, id := range s.batch.responses {
		own, ok := a.spelled(id)
		if !ok || done[string(own)] {
			continue
		}
		done[string(own)] = true
		out = append(append(out, errorAnswer(own, dropCode, fmt.Sprintf("its answer, a JSON-RPC batch of %d bytes, passed the %d bytes cairn reads of one", size, limit))...), '\n')
	}
	return out
}

// batchScan finds, in a JSON-RPC batch read a piece at a time without
// being kept, the id of each member that is a response (an object with
// an id that may be a request's, and no method), keeping at most maxAsked
// of them.
type batchScan struct {
	depth      int
	inStr, esc bool
	member     *messageScan // the member object being read; nil between
	responses  []json.RawMessage
}

func (s *batchScan) feed(b []byte) {
	from := 0 // where the member being read begins in b
	for i, c := range b {
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
			}
			continue
		}
		switch c {
		case '"':
			s.inStr = true
		case '{', '[':
			if s.depth++; s.depth == 2 && c == '{' {
				s.member, from = &messageScan{}, i
			}
		case '}', ']':
			if s.depth--; s.depth == 1 && s.member != nil {
				s.member.feed(b[from : i+1])
				s.ended()
			}
		}
	}
	if s.member != nil {
		s.member.feed(b[from:])
	}
}

// ended keeps the id of the member just read if it is a response.
func (s *batchScan) ended() {
	m := s.member
	s.member = nil
	if len(s.responses) >= maxAsked || m.method.found || !m.id.found {
		return
	}
	if id := m.id.requestID(); string(id) != "null" {
		s.responses = append(s.responses, bytes.Clone(id))
	}
}
