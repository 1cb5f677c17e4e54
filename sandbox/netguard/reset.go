package netguard

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// An HTTP/2 server ends one request, and not its connection, by
// resetting the request's stream (RST_STREAM) with an error code; or it
// goes away (GOAWAY), naming the last request it processed, with a code.
// net/http says so in its own words ("stream error: stream ID 3;
// INTERNAL_ERROR; received from peer"), or quotes them in advice on its
// API; so a reset is said in cairn's: that the server reset the stream,
// with which code, whether the request reached the remote side and
// whether it may be sent again (streamError.unanswered, goneAway,
// cutShort). A server that breaks HTTP/2 is said so too (h2broken.go).

// streamError has the fields of net/http's HTTP/2 stream error, which
// errors.As fills in (its As method copies into a struct of the same
// fields).
type streamError struct {
	StreamID uint32
	Code     uint32
	Cause    error
}

func (e streamError) Error() string {
	return fmt.Sprintf("stream error: stream ID %d; %s", e.StreamID, h2Code(e.Code))
}

// h2Codes are HTTP/2's error codes by number (RFC 9113, section 7).
var h2Codes = []string{"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
	"STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR",
	"ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"}

// h2Code is an HTTP/2 error code as a reader may look it up: its name and
// number, or its number alone for a code HTTP/2 does not define.
func h2Code(code uint32) string {
	if int(code) < len(h2Codes) {
		return fmt.Sprintf("%s (0x%x)", h2Codes[code], code)
	}
	return fmt.Sprintf("0x%x (a code HTTP/2 does not define)", code)
}

// refusedStream is the code of a stream the server did not process.
const refusedStream = 7

// streamText is a stream error as net/http writes it, which it quotes in
// an error of its own when it does not send the request again: "cannot
// retry err [stream error: stream ID 1; REFUSED_STREAM; received from
// peer] after Request.Body was written".
var streamText = regexp.MustCompile(`stream error: stream ID (\d+); ([A-Z0-9_]+|unknown error code 0x[0-9a-f]+); received from peer`)

// peerReset is the reset of a request's stream that the server sent
// (not one the host's transport made) found in err.
func peerReset(err error) (streamError, bool) {
	var se streamError
	if err == nil {
		return se, false
	}
	if errors.As(err, &se) {
		return se, se.Cause != nil && se.Cause.Error() == "received from peer"
	}
	m := streamText.FindStringSubmatch(err.Error())
	if m == nil {
		return se, false
	}
	id, _ := strconv.ParseUint(m[1], 10, 32)
	se.StreamID, se.Code = uint32(id), codeOf(m[2])
	return se, true
}

// codeOf is the number of an HTTP/2 error code as net/http writes it.
func codeOf(name string) uint32 {
	for i, n := range h2Codes {
		if n == name {
			return uint32(i)
		}
	}
	var code uint32
	fmt.Sscanf(name, "unknown error code 0x%x", &code)
	return code
}

// unanswered says what a server that reset the request's stream before
// its answer did: the request reached it; with REFUSED_STREAM the server
// says it did not process it (RFC 9113, section 8.7), so it may be sent
// again; with any other code the remote side may have acted on it.
func (e streamError) unanswered() error {
	if e.Code == refusedStream {
		return notProcessedf("no response: the server reset the request's HTTP/2 stream with code %s, which says it did not process the request (RFC 9113, section 8.7): it reached the server, which did not act on it; it was not sent again, and may be sent again",
			h2Code(e.Code))
	}
	return fmt.Errorf("no response: the server reset the request's HTTP/2 stream with code %s before it answered: the request reached the remote side, which may have acted on it; it was not sent again: send it again, as a request of its own, if the remote side may take it twice",
		h2Code(e.Code))
}

// goAwayText is net/http's word for a request that a server's GOAWAY
// named no longer processed (its stream past the last the server names),
// which it does not send again on its own (replay.go).
var goAwayText = regexp.MustCompile(`http2: Transport received (?:Server's graceful shutdown GOAWAY|GOAWAY from server ErrCode:([A-Z0-9_]+|unknown error code 0x[0-9a-f]+))`)

// goneAway says what a server whose GOAWAY named an earlier request as the
// last it processed did: it did not process this one (RFC 9113, section
// 6.8), so it may be sent again. ok is false if err is no such GOAWAY.
func goneAway(err error) (error, bool) {
	m := goAwayText.FindStringSubmatch(err.Error())
	if m == nil {
		return nil, false
	}
	code := h2Code(codeOf(m[1])) // NO_ERROR for a graceful one
	return notProcessedf("no response: the server went away (HTTP/2 GOAWAY, code %s) naming an earlier request as the last it processed, which says it did not process this one (RFC 9113, section 6.8): it reached the server, which did not act on it; it was not sent again, and may be sent again", code), true
}

// notProcessed is the error of a request the server said it did not
// process: errors.Is finds ErrNotProcessed in it, and its text is its own.
type notProcessed struct{ error }

func (notProcessed) Is(target error) bool { return target == ErrNotProcessed }

// notProcessedf is fmt.Errorf's error, marked as notProcessed.
func notProcessedf(format string, a ...any) error {
	return notProcessed{fmt.Errorf(format, a...)}
}
