package netguard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/cairnrun/cairn/internal/plural"
)

// A server may end a response before its body does: close the connection
// (or, over HTTP/2, end the stream) before the bytes its Content-Length
// promised, or before the chunk that ends a chunked body. net/http says
// io.ErrUnexpectedEOF alone, which tells a tool, and the model reading
// its answer, neither what happened nor what to do; and under gzip the
// decoder's word for it read as a body that is not gzip. So the body is
// read through a countedBody, and a body that its transport found cut
// off is said to be (cutShort).

// countedBody is a response body that counts the bytes read from it, as
// they came (in gzip, if that is how they came), and keeps the error its
// reader returned.
type countedBody struct {
	io.ReadCloser
	n   int64
	err error
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// cutOff reports whether the transport found the body cut off before
// the end its framing promised.
func (b *countedBody) cutOff() bool {
	_, reset := peerReset(b.err)
	_, broken := brokenH2(b.err)
	return errors.Is(b.err, io.ErrUnexpectedEOF) || reset || broken
}

// cutShort is the error of a response whose body b the server cut off,
// saying after how many of the bytes promised, and that the request may
// be sent again: the remote side answered it, so sending it again is
// for a request it may take twice.
func cutShort(resp *http.Response, b *countedBody) error {
	who, why := "the server closed the connection", b.err
	if resp.ProtoMajor == 2 {
		who = "the server ended the response (its stream or its connection)"
	}
	if reset, ok := peerReset(b.err); ok {
		who, why = "the server reset the response's HTTP/2 stream with code "+h2Code(reset.Code), reset
	}
	what := fmt.Sprintf("after %s of the body, before its end", plural.Count(b.n, "byte"))
	switch {
	case resp.ContentLength >= 0:
		what = fmt.Sprintf("after %d of the %s the response promised (Content-Length: %d)", b.n, plural.Count(resp.ContentLength, "byte"), resp.ContentLength)
	case slices.Contains(resp.TransferEncoding, "chunked"):
		what = fmt.Sprintf("after %s of the body, before the chunk that ends it (Transfer-Encoding: chunked)", plural.Count(b.n, "byte"))
	}
	const advice = "the tool is not given it; the request reached the remote side, which answered %d: send it again, as a request of its own, if the remote side may take it twice"
	if broken, ok := brokenH2(b.err); ok { // said in cairn's words, not net/http's
		return fmt.Errorf("%s %s, so the body was cut short and "+advice, broken.what, what, resp.StatusCode)
	}
	return fmt.Errorf("%s %s, so the body was cut short (%w) and "+advice, who, what, why, resp.StatusCode)
}
