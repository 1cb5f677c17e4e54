package netguard

import (
	"errors"
	"fmt"
	"regexp"
)

// An HTTP/2 server may break the protocol (send a malformed frame, a
// frame HTTP/2 does not allow where it came, more data than the host's
// flow-control window allows, headers that do not decompress), which the
// host's HTTP/2 client ends by closing the connection (a connection error)
// or resetting the request's stream (a stream error); or it may go away
// (GOAWAY) naming the request among those it may have processed and close
// the connection without answering. net/http says so in its own words
// ("connection error: PROTOCOL_ERROR", "stream error: stream ID 1;
// PROTOCOL_ERROR", "http2: server sent GOAWAY and closed the connection;
// LastStreamID=1, ErrCode=PROTOCOL_ERROR, debug=..."), which tell the tool
// neither what the server did nor what became of the request; so they are
// said in cairn's (brokenH2), as resets are (reset.go).

// h2Break is what a server that broke or left an HTTP/2 connection or
// stream did: what, a clause ("the server ..."), and reached, whether the
// request surely reached it (else it may have).
type h2Break struct {
	what    string
	reached bool
}

var (
	// goAwayClosedText is net/http's word for a request that a server's
	// GOAWAY named among those it may have processed, before it closed the
	// connection without answering it (a GOAWAY that named it not
	// processed is goAwayText).
	goAwayClosedText = regexp.MustCompile(`http2: server sent GOAWAY and closed the connection; LastStreamID=\d+, ErrCode=([A-Z0-9_]+|unknown error code 0x[0-9a-f]+)`)
	// connErrorText is the whole text of net/http's HTTP/2 connection
	// error, which its client closes the connection with.
	connErrorText = regexp.MustCompile(`^connection error: ([A-Z0-9_]+|unknown error code 0x[0-9a-f]+)$`)
)

// frameTooLarge is net/http's error for a frame larger than its client
// allows, which it closes the connection with.
const frameTooLarge = "http2: frame too large"

// brokenH2 finds in err a server that broke HTTP/2, or went away naming
// the request as one it may have processed. ok is false if err is
// neither (a reset the server sent is peerReset's).
func brokenH2(err error) (b h2Break, ok bool) {
	if err == nil {
		return b, false
	}
	if m := goAwayClosedText.FindStringSubmatch(err.Error()); m != nil {
		return h2Break{fmt.Sprintf("the server went away (HTTP/2 GOAWAY, code %s), naming the request among those it may have processed (RFC 9113, section 6.8), and closed the connection",
			h2Code(codeOf(m[1]))), true}, true
	}
	if se, ok := localReset(err); ok {
		why := h2Broke(se.Code)
		if se.Cause != nil {
			why += "; " + se.Cause.Error()
		}
		return h2Break{fmt.Sprintf("the server broke HTTP/2 on the request's stream (%s), and the host reset the stream", why), true}, true
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if m := connErrorText.FindStringSubmatch(e.Error()); m != nil {
			return h2Break{fmt.Sprintf("the server broke HTTP/2 (%s), and the host closed the connection", h2Broke(codeOf(m[1]))), false}, true
		}
		if e.Error() == frameTooLarge {
			return h2Break{"the server broke HTTP/2 (" + h2Code(frameSizeError) + ": it sent a frame larger than the host allows), and the host closed the connection", false}, true
		}
	}
	return b, false
}

// localReset is the reset of a request's stream that the host's client
// made, the server's frames on it breaking HTTP/2, found in err.
func localReset(err error) (streamError, bool) {
	var se streamError
	if !errors.As(err, &se) {
		return se, false
	}
	return se, se.Cause == nil || se.Cause.Error() != "received from peer"
}

// frameSizeError is the code of a frame of a size HTTP/2 does not allow.
const frameSizeError = 6

// h2Broke is the code the host's HTTP/2 client ended a connection or a
// stream with, and what the server did that the code says.
func h2Broke(code uint32) string {
	did := map[uint32]string{
		1: "it sent a frame that is malformed, or that HTTP/2 does not allow where it came",
		3: "it sent more data than the host's flow-control window allowed, or took a window past the largest HTTP/2 allows",
		5: "it sent a frame on a stream already closed",
		6: "it sent a frame of a size HTTP/2 does not allow",
		9: "it sent headers whose compression (HPACK) does not decode",
	}[code]
	if did == "" {
		return h2Code(code)
	}
	return h2Code(code) + ": " + did
}

// unanswered is the error of a request whose server broke HTTP/2 or
// went away before it answered: what it did, whether the request reached
// it, and that it may be sent again if the remote side may take it twice.
func (b h2Break) unanswered() error {
	reached := "the request may have reached the remote side, which may have acted on it"
	if b.reached {
		reached = "the request reached the remote side, which may have acted on it"
	}
	return fmt.Errorf("no response: before it answered, %s: %s; it was not sent again: send it again, as a request of its own, if the remote side may take it twice",
		b.what, reached)
}
