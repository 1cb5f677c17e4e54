package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// readEvents is what events with the given limit passes on of in.
func readEvents(in string, limit int) (string, error) {
	out, err := io.ReadAll(&events{br: bufio.NewReaderSize(strings.NewReader(in), 16), limit: limit})
	return string(out), err
}

// An event over the limit is not passed on: a response (whatever the
// order of its members, in one data line or many) becomes an event of an
// error response to its request that says how large it was, with the
// event's id and retry lines; of a request or notification of the
// server's, or an event of another name, only those lines pass on. The
// events around it pass on whole.
func TestEventsDropAnswersTooLarge(t *testing.T) {
	big := strings.Repeat("h", 200)
	for _, tc := range []struct {
		name, event, want string // want: the lines in its place, but the data line
		id                string // of the error response, "" for none
	}{
		{"response", "event: message\nid: s-5\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + big + "\"}]}}\n",
			"id: s-5\n", "7"},
		{"response, id last, retry", "retry: 50\ndata: {\"result\":{\"text\":\"" + big + "\",\"id\":1},\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\"}\nid: 9\n",
			"id: 9\nretry: 50\n", `"a\"b"`},
		{"response in many data lines", "data: {\"jsonrpc\":\"2.0\",\n" + strings.Repeat("data: \"x\":\"hhhhhhhhhhhh\",\n", 10) + "data: \"id\":8}\n",
			"", "8"},
		{"CRLF", "id: 3\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":1,\"message\":\"" + big + "\"}}\r\n",
			"id: 3\n", "4"},
		{"request of the server's", "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sampling/createMessage\",\"params\":{\"x\":\"" + big + "\"}}\n",
			"id: 1\n", ""},
		{"notification", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + big + "\"}}\n", "", ""},
		{"another name", "event: ping\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"" + big + "\"}\n", "", ""},
		{"comments", ":" + big + "\n:" + big + "\nid: 2\n", "id: 2\n", ""},
	} {
		before, after := "data: {\"id\":1}\n\n", "id: 0\ndata: {\"id\":2}\n\n"
		out, err := readEvents(before+tc.event+"\n"+after, 100)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		middle, okBefore := strings.CutPrefix(out, before)
		middle, okAfter := strings.CutSuffix(middle, after)
		if !okBefore || !okAfter {
			t.Errorf("%s: the events around it: %q", tc.name, out)
			continue
		}
		if tc.id == "" {
			if middle != tc.want+"\n" {
				t.Errorf("%s: passed on %q, want %q", tc.name, middle, tc.want+"\n")
			}
			continue
		}
		lines, data, _ := strings.Cut(middle, "data: ")
		var r struct {
			ID    json.RawMessage
			Error struct {
				Code    int
				Message string
			}
		}
		if lines != tc.want || !strings.HasSuffix(data, "\n\n") || json.Unmarshal([]byte(data), &r) != nil || string(r.ID) != tc.id ||
			r.Error.Code != dropCode || !strings.Contains(r.Error.Message, "passed the 100 bytes") {
			t.Errorf("%s: passed on %q, want %q and an error response to %s", tc.name, middle, tc.want, tc.id)
		}
	}
}

// An event within the limit passes on as it is, the last one too,
// without its blank line at the end of the stream; one over the limit
// there is replaced all the same.
func TestEventsPassEventsWithinTheLimit(t *testing.T) {
	in := "event: message\nid: 1\ndata: " + strings.Repeat("x", 72) + "\n\ndata: {\"id\":3}"
	if out, err := readEvents(in, 100); err != nil || out != in {
		t.Errorf("passed on %q (%v), want %q", out, err, in)
	}
	in = "id: 4\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":\"" + strings.Repeat("h", 200) + "\"}"
	if out, err := readEvents(in, 100); err != nil || !strings.HasPrefix(out, "id: 4\ndata: {") ||
		!strings.Contains(out, `"id":5`) || !strings.HasSuffix(out, "}\n\n") {
		t.Errorf("passed on %q (%v), want the error response to 5", out, err)
	}
}

// Whatever a server sends as events, events passes on each event within
// the limit as it is and in order, and in the place of a longer one only
// its id and retry lines and an error response of dropCode.
func FuzzEvents(f *testing.F) {
	f.Add([]byte("data: {\"id\":1}\n\nid: 2\ndata: {\"id\":2,\"result\":\"" + strings.Repeat("h", 80) + "\"}\n\nxyz"))
	f.Add([]byte("retry: 1\r\ndata: {\"method\":\"m\",\"id\":\"\\\\\"}\r\n\r\n"))
	f.Add([]byte("id: 3\ndata: [{\"id\":1},\ndata: {\"method\":\"m\"}]\n\nretry: 5\ndata: []\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		const limit = 40
		out, err := readEvents(string(in), limit)
		if err != nil {
			t.Fatal(err)
		}
		rest := []byte(out)
		var ev []byte
		check := func(event []byte, size int) {
			if members, fields, ok := batchEvent(event); ok && size <= limit {
				// A batch: an event of each member, the last with the event's
				// id and retry lines (an event of those alone if it has none).
				if len(members) == 0 && fields == 0 {
					return
				}
				for i := range max(len(members), 1) {
					one, tail, ok := bytes.Cut(rest, []byte("\n\n"))
					if !ok {
						t.Fatalf("in the place of batch %q: %q", event, rest)
					}
					rest = tail
					var want bytes.Buffer
					if len(members) > 0 {
						json.Compact(&want, members[i])
					}
					if data := bytes.TrimPrefix(one[bytes.LastIndexByte(one, '\n')+1:], []byte("data: ")); len(members) > 0 && !bytes.Equal(data, want.Bytes()) {
						t.Fatalf("in the place of member %d of batch %q: %q", i, event, one)
					}
				}
				return
			}
			if size <= limit {
				if !bytes.HasPrefix(rest, event) {
					t.Fatalf("event %q not passed on as it is: %q", event, rest)
				}
				rest = rest[len(event):]
				return
			}
			for len(rest) > 0 {
				line, tail, _ := bytes.Cut(rest, []byte("\n"))
				rest = tail
				if len(line) == 0 {
					return
				}
				if !bytes.HasPrefix(line, []byte("id")) && !bytes.HasPrefix(line, []byte("retry")) &&
					(!bytes.HasPrefix(line, []byte("data: {")) || !bytes.Contains(line, []byte(`"code":-32090`))) {
					t.Fatalf("in the place of %q: line %q", event, line)
				}
			}
			t.Fatalf("in the place of %q: no blank line", event)
		}
		size := 0
		for line := range bytes.Lines(in) {
			if len(bytes.TrimRight(line, "\r\n")) == 0 {
				check(append(ev, line...), size)
				ev, size = nil, 0
				continue
			}
			ev, size = append(ev, line...), size+len(line)
		}
		if len(ev) > 0 {
			check(ev, size)
		}
		if len(rest) != 0 {
			t.Fatalf("passed on more: %q", rest)
		}
	})
}

// batchEvent reports whether event's data is a JSON-RPC batch, with its
// members and how many id and retry lines it has.
func batchEvent(event []byte) ([]json.RawMessage, int, bool) {
	var data [][]byte
	fields := 0
	for line := range bytes.Lines(event) {
		name, value, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		switch string(name) {
		case "data":
			data = append(data, bytes.TrimPrefix(value, []byte(" ")))
		case "id", "retry":
			fields++
		case "event":
			if v := string(bytes.TrimPrefix(value, []byte(" "))); v != "" && v != "message" {
				return nil, 0, false
			}
		}
	}
	msg := bytes.TrimSpace(bytes.Join(data, []byte("\n")))
	var members []json.RawMessage
	if len(msg) == 0 || msg[0] != '[' || json.Unmarshal(msg, &members) != nil {
		return nil, 0, false
	}
	return members, fields, true
}
