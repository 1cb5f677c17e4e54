package netguard

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// goAwayAndClose answers with a GOAWAY of code that names the request as
// processed, and closes the connection without answering it.
func goAwayAndClose(code uint32) h2Answer {
	return func(frame func(byte, byte, uint32, []byte), stream uint32) {
		p := binary.BigEndian.AppendUint32(nil, stream)
		frame(7, 0, 0, append(binary.BigEndian.AppendUint32(p, code), "debug data"...))
		frame(closeConn, 0, 0, nil)
	}
}

// answerBegun begins an answer, :status 200 and 7 bytes of its body,
// and goes on with then.
func answerBegun(then h2Answer) h2Answer {
	return func(frame func(byte, byte, uint32, []byte), stream uint32) {
		frame(1, 4, stream, []byte{0x88}) // HEADERS, END_HEADERS: :status 200
		frame(0, 0, stream, []byte("partial"))
		then(frame, stream)
	}
}

// Regression: an HTTP/2 server that broke the protocol (a frame HTTP/2
// does not allow where it came, a window past the largest, headers that do
// not decompress, a frame too large), or that went away naming the request
// among those it may have processed and closed the connection, had the
// tool told net/http's words: "connection error: PROTOCOL_ERROR", "stream
// error: stream ID 1; PROTOCOL_ERROR", "http2: frame too large", "http2:
// server sent GOAWAY and closed the connection; LastStreamID=1,
// ErrCode=PROTOCOL_ERROR, debug=...". The tool is told what the server
// did, whether the request reached it, and that it may be sent again if
// the remote side may take it twice; it was sent once, and is not taken
// for one the server did not process.
func TestHTTP2ServerThatBreaksTheProtocolIsSaidWhatItDid(t *testing.T) {
	const (
		reached    = ": the request reached the remote side, which may have acted on it; it was not sent again: send it again, as a request of its own, if the remote side may take it twice"
		mayReached = ": the request may have reached the remote side, which may have acted on it; it was not sent again: send it again, as a request of its own, if the remote side may take it twice"
		cut        = " after 7 bytes of the body, before its end, so the body was cut short and the tool is not given it; the request reached the remote side, which answered 200: send it again, as a request of its own, if the remote side may take it twice"
		badFrame   = "PROTOCOL_ERROR (0x1): it sent a frame that is malformed, or that HTTP/2 does not allow where it came"
	)
	dataOnStream0 := func(frame func(byte, byte, uint32, []byte), _ uint32) { frame(0, 0, 0, []byte("x")) }
	windowUpdate0 := func(frame func(byte, byte, uint32, []byte), stream uint32) { frame(8, 0, stream, []byte{0, 0, 0, 0}) }
	tooLarge := func(frame func(byte, byte, uint32, []byte), stream uint32) { frame(0, 0, stream, make([]byte, 20000)) }
	for _, tc := range []struct {
		name   string
		answer h2Answer
		want   string
	}{
		{"GOAWAY PROTOCOL_ERROR naming it, and closed", goAwayAndClose(1),
			"no response: before it answered, the server went away (HTTP/2 GOAWAY, code PROTOCOL_ERROR (0x1)), naming the request among those it may have processed (RFC 9113, section 6.8), and closed the connection" + reached},
		{"GOAWAY NO_ERROR naming it, and closed", goAwayAndClose(0),
			"no response: before it answered, the server went away (HTTP/2 GOAWAY, code NO_ERROR (0x0)), naming the request among those it may have processed (RFC 9113, section 6.8), and closed the connection" + reached},
		{"DATA on stream 0", dataOnStream0,
			"no response: before it answered, the server broke HTTP/2 (" + badFrame + "), and the host closed the connection" + mayReached},
		{"WINDOW_UPDATE of 0 on the stream", windowUpdate0,
			"no response: before it answered, the server broke HTTP/2 on the request's stream (" + badFrame + "), and the host reset the stream" + reached},
		{"a header name in capitals", func(frame func(byte, byte, uint32, []byte), stream uint32) {
			frame(1, 4, stream, []byte{0x88, 0x00, 0x03, 'B', 'A', 'D', 0x01, 'x'}) // :status 200, BAD: x
		}, `no response: before it answered, the server broke HTTP/2 on the request's stream (` + badFrame + `; invalid header field name "BAD"), and the host reset the stream` + reached},
		{"a window past the largest", func(frame func(byte, byte, uint32, []byte), _ uint32) {
			frame(8, 0, 0, binary.BigEndian.AppendUint32(nil, 1<<31-1))
			frame(8, 0, 0, binary.BigEndian.AppendUint32(nil, 1<<31-1))
		}, "no response: before it answered, the server broke HTTP/2 (FLOW_CONTROL_ERROR (0x3): it sent more data than the host's flow-control window allowed, or took a window past the largest HTTP/2 allows), and the host closed the connection" + mayReached},
		{"headers that do not decompress", func(frame func(byte, byte, uint32, []byte), stream uint32) {
			frame(1, 4, stream, []byte{0xff, 0xff, 0xff, 0xff})
		}, "no response: before it answered, the server broke HTTP/2 (COMPRESSION_ERROR (0x9): it sent headers whose compression (HPACK) does not decode), and the host closed the connection" + mayReached},
		{"a frame too large", tooLarge,
			"no response: before it answered, the server broke HTTP/2 (FRAME_SIZE_ERROR (0x6): it sent a frame larger than the host allows), and the host closed the connection" + mayReached},
		{"GOAWAY naming it, and closed, in the body", answerBegun(goAwayAndClose(1)),
			"read the response body: the server went away (HTTP/2 GOAWAY, code PROTOCOL_ERROR (0x1)), naming the request among those it may have processed (RFC 9113, section 6.8), and closed the connection" + cut},
		{"DATA on stream 0 in the body", answerBegun(dataOnStream0),
			"read the response body: the server broke HTTP/2 (" + badFrame + "), and the host closed the connection" + cut},
		{"WINDOW_UPDATE of 0 in the body", answerBegun(windowUpdate0),
			"read the response body: the server broke HTTP/2 on the request's stream (" + badFrame + "), and the host reset the stream" + cut},
		{"a frame too large in the body", answerBegun(tooLarge),
			"read the response body: the server broke HTTP/2 (FRAME_SIZE_ERROR (0x6): it sent a frame larger than the host allows), and the host closed the connection" + cut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, pool, seen := rawH2Server(t, tc.answer)
			g, err := New(Rules{Allow: []string{addr}, Methods: []string{"GET", "POST"}, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			trust(g, pool)
			for _, req := range []*sandbox.NetRequest{
				{Method: "POST", URL: "https://" + addr + "/order", Body: []byte("an order")},
				{Method: "GET", URL: "https://" + addr + "/order"},
			} {
				seen.Store(0)
				_, err := g.Call().RoundTrip(context.Background(), req)
				if err == nil || err.Error() != tc.want {
					t.Errorf("%s: %v\nwant %q", req.Method, err, tc.want)
				}
				if errors.Is(err, ErrNotSent) || errors.Is(err, ErrNotProcessed) {
					t.Errorf("%s: taken as not sent (%v) or not processed (%v)", req.Method, errors.Is(err, ErrNotSent), errors.Is(err, ErrNotProcessed))
				}
				for _, word := range []string{"connection error:", "stream error", "stream ID", "LastStreamID", "ErrCode=", "debug", "frame too large"} {
					if err != nil && strings.Contains(err.Error(), word) {
						t.Errorf("%s: the error says %q, net/http's words: %v", req.Method, word, err)
					}
				}
				if n := seen.Load(); n != 1 {
					t.Errorf("%s: the server saw it %d times", req.Method, n)
				}
			}
		})
	}
}
