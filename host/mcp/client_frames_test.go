package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// readFrames is what frames with the given limit passes on of in.
func readFrames(in string, limit int) (string, error) {
	out, err := io.ReadAll(&frames{br: bufio.NewReaderSize(strings.NewReader(in), 16), limit: limit})
	return string(out), err
}

// A server's line over the limit is not passed on: a response (whatever
// the order of its members) becomes an error response to its request
// that says how large it was; a request or notification of the server's
// is dropped. The lines around it pass on whole.
func TestFramesDropAnswersTooLarge(t *testing.T) {
	big := strings.Repeat("h", 200)
	for _, tc := range []struct {
		name, line, id string // id: of the error response, "" for none
	}{
		{"response, id first", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + big + `"}]}}`, "7"},
		{"response, id last", `{"result":{"content":[{"type":"text","text":"` + big + `","id":1}]},"jsonrpc":"2.0","id":"a\"b"}`, `"a\"b"`},
		{"error response", `{"jsonrpc":"2.0","id":8,"error":{"code":1,"message":"` + big + `"}}`, "8"},
		{"request of the server's", `{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"x":"` + big + `"}}`, ""},
		{"request, method last", `{"jsonrpc":"2.0","id":3,"params":{"method":"` + big + `"},"method":"ping"}`, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}`, ""},
		{"response to nothing", `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"` + big + `"}}`, ""},
		{"not JSON", big, ""},
	} {
		out, err := readFrames("{\"id\":1}\n"+tc.line+"\n{\"id\":2}\n", 100)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		lines := strings.SplitAfter(out, "\n")
		if lines[0] != "{\"id\":1}\n" || lines[len(lines)-2] != "{\"id\":2}\n" || lines[len(lines)-1] != "" {
			t.Errorf("%s: the lines around it: %q", tc.name, out)
		}
		switch middle := lines[1 : len(lines)-2]; {
		case tc.id == "" && len(middle) != 0:
			t.Errorf("%s: passed on %q, want nothing", tc.name, middle)
		case tc.id != "":
			var r struct {
				ID    json.RawMessage
				Error struct {
					Code    int
					Message string
				}
			}
			if len(middle) != 1 || json.Unmarshal([]byte(middle[0]), &r) != nil || string(r.ID) != tc.id ||
				r.Error.Code != dropCode || !strings.Contains(r.Error.Message, "passed the 100 bytes") {
				t.Errorf("%s: passed on %q, want an error response to %s", tc.name, middle, tc.id)
			}
		}
	}
}

// The last line, without its newline, and a line of exactly the limit
// pass on as they are.
func TestFramesPassLinesWithinTheLimit(t *testing.T) {
	in := strings.Repeat("x", 99) + "\n" + `{"id":3}`
	if out, err := readFrames(in, 100); err != nil || out != in {
		t.Errorf("passed on %q (%v), want %q", out, err, in)
	}
}

// Whatever a server writes, frames passes on each line within the limit
// as it is and in order, and in the place of a longer one nothing or an
// error response of dropCode.
func FuzzFrames(f *testing.F) {
	f.Add([]byte("{\"id\":1}\n{\"id\":2,\"result\":\"" + strings.Repeat("h", 80) + "\"}\nxyz"))
	f.Add([]byte(`{"method":"m","id":"\\"}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		const limit = 40
		out, err := readFrames(string(in), limit)
		if err != nil {
			t.Fatal(err)
		}
		rest := []byte(out)
		for _, line := range bytes.SplitAfter(in, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			if len(line) <= limit {
				if !bytes.HasPrefix(rest, line) {
					t.Fatalf("line %q not passed on as it is: %q", line, rest)
				}
				rest = rest[len(line):]
				continue
			}
			if i := bytes.IndexByte(rest, '\n'); i >= 0 && bytes.Contains(rest[:i], []byte(`"code":-32090`)) &&
				bytes.Contains(rest[:i], []byte("passed the 40 bytes cairn reads of one")) { // longer than a line passed on
				var r map[string]json.RawMessage
				if json.Unmarshal(rest[:i], &r) != nil || r["id"] == nil {
					t.Fatalf("error response %q", rest[:i])
				}
				rest = rest[i+1:]
			}
		}
		if len(rest) != 0 {
			t.Fatalf("passed on more: %q", rest)
		}
	})
}
