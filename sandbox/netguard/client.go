package netguard

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox"
)

// Client is one call's use of a Guard: it counts the call's requests and
// sends them. It is a sandbox.Net, used from one goroutine.
type Client struct {
	g        *Guard
	requests int
	admitted *sandbox.NetRequest
	url      *url.URL // of admitted
	// Sent and Received count the call's request and response body
	// bytes: a request's only once a connection was obtained for it.
	Sent, Received int64
}

var _ sandbox.Net = (*Client)(nil)

// Call starts a call's use of the guard.
func (g *Guard) Call() *Client { return &Client{g: g} }

// SecretValues are the guard's secret values, which what the call
// records must not hold (see Redact).
func (c *Client) SecretValues() []string { return c.g.SecretValues() }

// Requests is how many requests the call has been admitted.
func (c *Client) Requests() int { return c.requests }

// Admit checks req against the grant and counts it as one of the call's
// requests: its method, URL (http or https, no credentials, a host and
// port the allow list names), headers and body size. The addresses are
// checked when it is sent. RoundTrip admits a request it is given that
// was not admitted just before.
//
// # Errors
//
// ErrRefused, saying what to change.
func (c *Client) Admit(req *sandbox.NetRequest) error {
	u, err := c.check(req)
	if err != nil {
		return err
	}
	c.requests++
	c.admitted, c.url = req, u
	return nil
}

func (c *Client) check(req *sandbox.NetRequest) (*url.URL, error) {
	r := c.g.rules
	if len(req.URL) > MaxURLBytes {
		return nil, fmt.Errorf("%w: a URL of %d bytes, more than the %d a request may have (as servers commonly refuse longer ones); send what does not fit in the request's body",
			ErrRefused, len(req.URL), MaxURLBytes)
	}
	if max := orDefault(r.MaxRequests, DefaultMaxRequests); c.requests >= max {
		return nil, fmt.Errorf("%w: the call has made its %d requests (net: {max_requests})", ErrRefused, max)
	}
	if !c.g.methods[req.Method] {
		return nil, fmt.Errorf("%w: method %s is not granted (net: {methods} in the agent file; --net-method for cairn exec)", ErrRefused, RecordedMethod(req.Method))
	}
	if max := orDefault(r.MaxRequestBytes, DefaultMaxRequestBytes); int64(len(req.Body)) > max {
		return nil, fmt.Errorf("%w: a request body of %d bytes, more than %d (net: {max_request_bytes})", ErrRefused, len(req.Body), max)
	}
	if err := checkHeaders(req.Header); err != nil {
		return nil, err
	}
	for _, o := range MethodOverrides(req.Header) {
		if !c.g.methods[o.Method] {
			return nil, fmt.Errorf("%w: the %s request's %s header asks the server to take it as %s, which is not granted (net: {methods} in the agent file; --net-method for cairn exec)",
				ErrRefused, RecordedMethod(req.Method), o.Header, o.Method)
		}
	}
	u, err := c.g.checkURL(req.URL)
	if err != nil {
		return nil, err
	}
	if h := c.g.clearText(u); h != "" {
		return nil, fmt.Errorf("%w: %s would carry the secret %s header in clear text, which whoever answers for %s, or anyone on the way, could read: use https",
			ErrRefused, "http://"+u.Host, h, u.Hostname())
	}
	return u, nil
}

// clearText is the name of a secret header that a request to u, the
// URL checkURL returned, would carry over plain http to a host whose
// traffic may cross the internet; "" if none. Over https TLS refuses a
// peer that is not the host; over http only a loopback, private or
// link-local address an allow entry names (shared ones, 100.64.0.0/10,
// among the private: see local), or localhost, keeps the
// secret off the internet.
func (g *Guard) clearText(u *url.URL) string {
	if u.Scheme != "http" {
		return ""
	}
	h := u.Hostname()
	if a, err := netip.ParseAddr(h); err == nil && local(a) || h == "localhost" {
		return ""
	}
	port := portOf(u)
	for _, s := range g.secrets {
		if s.matches(h, port) {
			return s.header
		}
	}
	return ""
}

// shared is the IPv4 shared address space (RFC 6598): carrier-grade NAT,
// and the addresses a tailnet (Tailscale) gives its nodes.
var shared = netip.MustParsePrefix("100.64.0.0/10")

// local reports whether a's traffic stays off the internet: a loopback,
// private (RFC 1918, IPv6 unique local), shared (RFC 6598) or
// link-local address. Shared addresses are private to the network that
// uses them, a carrier's or a tailnet's, as RFC 1918 ones are to theirs.
func local(a netip.Addr) bool {
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || shared.Contains(a)
}

// checkURL reads a request's URL and checks it against the allow list,
// returning it with its host in normal form.
func (g *Guard) checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// Not url.Error's text, which quotes the URL whole: it is
		// recorded, and the URL may hold a secret.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: the URL does not read: %v", ErrRefused, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: scheme %q (http and https only)", ErrRefused, u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: a URL with credentials; let the agent file add them as a secret", ErrRefused)
	}
	h, _, err := NormalHost(u.Hostname())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	port := defaultPort(u.Scheme)
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("%w: port %q", ErrRefused, p)
		}
	}
	if len(g.allowed(h, port)) == 0 {
		return nil, fmt.Errorf("%w: %s is not in the allow list (net: {allow} in the agent file; --net for cairn exec)", ErrRefused, net.JoinHostPort(h, strconv.Itoa(port)))
	}
	u.RawQuery = escapeQuery(u.RawQuery)
	// The Host header is u.Host: with the port only when it is not the
	// scheme's default, as clients send it and servers match it.
	u.Host = net.JoinHostPort(h, strconv.Itoa(port))
	if port == defaultPort(u.Scheme) {
		u.Host = strings.TrimSuffix(u.Host, ":"+strconv.Itoa(port))
	}
	if n := len(sentURL(u)); n > MaxURLBytes {
		return nil, fmt.Errorf("%w: a URL of %d bytes as sent (each byte a URL may not hold as it is, a space or one past ASCII, sent as %%XX), more than the %d a request may have (as servers commonly refuse longer ones); send what does not fit in the request's body",
			ErrRefused, n, MaxURLBytes)
	}
	return u, nil
}

// sentURL is u, a URL checkURL made, as it is sent: its path and query
// percent-encoded as they go on the wire, without its fragment, which is
// not sent.
func sentURL(u *url.URL) string {
	s := *u
	s.Fragment, s.RawFragment = "", ""
	return s.String()
}

// escapeQuery is a raw query as it is sent: each byte a query may not
// hold as it is (a space, a control character, `"`, `<`, `>`, a byte past
// ASCII) percent-encoded, as browsers send it, and the rest as it was.
// net/http sends the query as it is given, where it escapes the path: a
// space in it would end the request's target on the wire, and what
// follows would read as its protocol (`GET /p?a b HTTP/1.0 x HTTP/1.1`).
func escapeQuery(q string) string {
	var b strings.Builder
	for i := range len(q) {
		if c := q[i]; c > ' ' && c < 0x7f && c != '"' && c != '<' && c != '>' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// portOf is the port of u, a URL checkURL returned.
func portOf(u *url.URL) int {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	return defaultPort(u.Scheme)
}

// checkHeaders refuses headers past the bounds, and any net/http would
// refuse to send (a name that is no token, a value with a control
// character): refused here, such a request is journaled as never sent,
// where net/http's refusal came after the request was journaled as sent.
func checkHeaders(h map[string][]string) error {
	if n, size := headerSize(h); n > MaxHeaders || size > MaxHeaderBytes {
		return fmt.Errorf("%w: %d headers of %d bytes, more than %d or %d", ErrRefused, n, size, MaxHeaders, MaxHeaderBytes)
	}
	for k, vs := range h {
		if !validHeaderName(k) {
			return fmt.Errorf("%w: header name %s is not a token", ErrRefused, quoted(k))
		}
		for _, v := range vs {
			if HasControl(v) {
				return fmt.Errorf("%w: the value of header %s holds a control character", ErrRefused, k)
			}
		}
	}
	return nil
}

// HasControl reports whether v holds a character no header value may: a
// control character other than a tab (a CR, an LF, a NUL...), or DEL.
func HasControl(v string) bool {
	return strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f })
}

// validHeaderName reports whether name is an HTTP token (RFC 9110).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// RoundTrip sends req, admitting it first unless it was just admitted,
// with the secrets for its host added, and reads the whole response
// within the grant's timeout and response size. It does not follow
// redirects. Sent counts the body's bytes once a connection was obtained
// for it.
//
// # Errors
//
// ErrRefused for what the grant does not allow (nothing was sent, or for
// an address refused at connect time, nothing reached the peer);
// ErrNotSent for a request no connection was obtained for (a refused
// connection, a name that does not resolve: nothing reached the peer);
// any other error is a request that may have reached the remote side. A
// time limit that ran out is named: the grant's timeout (net: {timeout})
// or the call's own (its context's deadline).
//
// The response's headers and body, and the error's text, hold no secret
// value of the guard, in any case, percent-encoded, JSON-escaped or
// base64-encoded (HideSecrets, RedactText): the tool never holds one,
// even where a server echoes it in a Location header, a body or a
// malformed answer.
// A body that holds one has each replaced by Redacted, and its
// Content-Length header, if it has one, says its new length: it may so
// be a little longer than the grant's max_response_bytes, which bounds
// what the server sends; one longer than MaxResponseLimit, which a tool
// cannot be given, is an error.
func (c *Client) RoundTrip(ctx context.Context, req *sandbox.NetRequest) (*sandbox.NetResponse, error) {
	resp, err := c.send(ctx, req)
	if err != nil {
		return nil, asText(c.g.hidden.inError(err))
	}
	if resp, err = c.hide(resp); err != nil {
		return nil, err
	}
	resp.Header = headerText(resp.Header)
	return resp, nil
}

// A tool is given the response in a message of the ABI, whose text is
// UTF-8, and a tool built before its decoder took other text for a
// header's, or an error's, reads none of the message if one is not: so a
// header's name or value that is not UTF-8 (HTTP allows a value's bytes
// past ASCII, obs-text, as a Latin-1 file name in Content-Disposition
// has) is given as abi.HeaderText reads it, each byte a Latin-1
// character, and an error's text (which may quote a server's bytes) with
// each byte sequence that is not UTF-8 as U+FFFD. This is done after the
// secrets are hidden, which are found in the bytes as they came.

// headerText is h with its names and values as abi.HeaderText reads them.
func headerText(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		name := abi.HeaderText(k)
		for _, v := range vs {
			out[name] = append(out[name], abi.HeaderText(v))
		}
	}
	return out
}

// asText is err with its text made UTF-8 (abi.ValidText).
func asText(err error) error {
	if text := abi.ValidText(err.Error()); text != err.Error() {
		return hiddenError{err: err, text: text}
	}
	return err
}

// hide is resp with the guard's secrets hidden in its headers and body.
func (c *Client) hide(resp *sandbox.NetResponse) (*sandbox.NetResponse, error) {
	resp.Header = c.g.hidden.header(resp.Header)
	sp := c.g.hidden.spans(resp.Body)
	if len(sp) == 0 {
		return resp, nil
	}
	body := replaceSpans(resp.Body, sp)
	if len(body) > MaxResponseLimit {
		return nil, fmt.Errorf("the response body is %d bytes with the secrets a server echoed in it replaced by %s, more than the %d a tool can be given; it was not given to the tool",
			len(body), Redacted, MaxResponseLimit)
	}
	if resp.Header.Get("Content-Length") != "" {
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	resp.Body = body
	return resp, nil
}

// hiddenError is an error whose text holds no secret value (or no text
// that is not UTF-8), and which is still the error it was made from
// (errors.Is sees through it).
type hiddenError struct {
	err  error
	text string
}

func (e hiddenError) Error() string { return e.text }
func (e hiddenError) Unwrap() error { return e.err }

// inError is err with every secret value in its text Redacted.
func (f *finder) inError(err error) error {
	if text := f.hide(err.Error()); text != err.Error() {
		return hiddenError{err: err, text: text}
	}
	return err
}

// send is RoundTrip but for hiding the secrets.
func (c *Client) send(ctx context.Context, req *sandbox.NetRequest) (*sandbox.NetResponse, error) {
	if c.admitted != req {
		if err := c.Admit(req); err != nil {
			return nil, err
		}
	}
	u := c.url
	c.admitted, c.url = nil, nil
	r := c.g.rules
	ctx, cancel := context.WithTimeoutCause(ctx, orDefault(r.Timeout, DefaultTimeout), errGrantTimeout)
	defer cancel()
	ctx = withDialFor(ctx) // so that net/http's dial ends with it too (dialBy)
	max := orDefault(r.MaxResponseBytes, DefaultMaxResponseBytes)
	ctx, end := context.WithCancelCause(ctx)
	defer end(nil)
	conn := connTrace{max: max, end: end} // ends the request past wireBound(max) (wire.go)
	defer conn.done()
	hr, err := http.NewRequestWithContext(conn.trace(ctx), req.Method, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	var carried bool
	hr.Header, carried = c.g.headersFor(req.Header, u)
	askedGzip := askGzip(hr)
	t := c.g.prepare(hr, req.Body)         // sends it once (replay.go)
	resp, err := c.g.roundTrip(ctx, t, hr) // or leaves it (left.go)
	if conn.sent() {
		c.Sent += int64(len(req.Body))
	}
	if err != nil {
		if dl, ok := ctx.Deadline(); ok && ctx.Err() == nil && !time.Now().Before(dl) {
			// A time limit ran out, and ended the request (the TLS
			// handshake is bounded by the grant's timeout too) before
			// its timer marked ctx: wait for it, so that the error
			// says which limit it was.
			<-ctx.Done()
		}
		if conn.sent() {
			err = conn.unanswered(err)
		}
		return nil, sendError(ctx, err, r, conn.sent())
	}
	left := false
	defer func() {
		if !left { // a body left may never close
			c.g.close(t, resp.Body)
		}
	}()
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		// net/http takes any three digits; an informational status
		// (1xx) it reads past itself, but for a 101.
		return nil, fmt.Errorf("the server answered with status %d, which is no HTTP status (they are 100 to 599); the answer is refused", resp.StatusCode)
	}
	if resp.StatusCode < 200 {
		// net/http hands back the connection itself as the body of a
		// "101 Switching Protocols" and stops watching the request's
		// context: no request here asks to switch (headersFor drops
		// Upgrade and Connection), so the answer is refused, and the
		// deferred Close closes that connection.
		return nil, fmt.Errorf("the server answered %q to a request that did not ask to switch protocols; the answer is refused", resp.Status)
	}
	got := &countedBody{ReadCloser: resp.Body} // as it came (cutshort.go)
	var raw io.ReadCloser = got
	gzipped := askedGzip && resp.ContentLength != 0 && onlyGzip(resp.Header)
	if gzipped {
		// The host decodes the gzip it asked for (askGzip), as
		// net/http would, but only where gzip is the answer's one
		// coding: net/http decodes by the first Content-Encoding line
		// and drops them all, so a body in gzip and then br would reach
		// the tool in br, unnamed and unsearched.
		raw = gunzip(&cappedBody{ReadCloser: got, left: gzipBound(max)})
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
	}
	body, err := c.g.readBody(ctx, t, raw, max)
	left = errors.Is(err, errLeft)
	c.Received += int64(len(body))
	if errors.Is(err, errPastGzipBound) {
		return nil, fmt.Errorf("the response body, in gzip as it came, is larger than %d bytes, more than gzip of a body of %d bytes (net: {max_response_bytes}) can be; the tool is not given it", gzipBound(max), max)
	}
	if err != nil && ctx.Err() == nil && got.cutOff() {
		return nil, fmt.Errorf("read the response body: %w", cutShort(resp, got))
	}
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("read the response body: %w", bodyStopped(ctx, err, r, resp.StatusCode, int64(len(body)), !left))
	}
	if err != nil {
		if gzipped {
			// A body that is not gzip, or ends before its gzip does,
			// fails to decode, often as io.ErrUnexpectedEOF alone.
			err = fmt.Errorf("it says it is gzip (Content-Encoding: gzip) and it does not decode as gzip: it is not gzip, or was cut short: %w", err)
		}
		return nil, fmt.Errorf("read the response body: %w", sendError(ctx, err, r, true))
	}
	if int64(len(body)) > max {
		advice := ""
		if max < MaxResponseLimit {
			advice = fmt.Sprintf("; a larger max_response_bytes (at most %d MiB) lets it through", MaxResponseLimit>>20)
		}
		return nil, fmt.Errorf("the response body is larger than %d bytes (net: {max_response_bytes}): the tool is not given it; reading stopped at %d bytes, which count as received%s", max, len(body), advice)
	}
	if ce := resp.Header.Values("Content-Encoding"); carried && len(body) > 0 && encoded(ce) {
		// The host decoded the gzip it asked for: this is a coding no
		// one asked for, in which no secret can be found.
		return nil, fmt.Errorf("the server answered in Content-Encoding %s, which the host did not ask for and cannot search for the secrets the request carried; the answer is refused", quoted(strings.Join(ce, ", ")))
	}
	return &sandbox.NetResponse{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// askGzip asks for a gzip body on hr, as net/http would on its own
// (not for a HEAD, whose answer has no body, nor for a range, whose
// part of a gzip stream would not decode), and reports whether it did.
// Asked for here, net/http leaves the answer as it came: the host
// decodes it (gunzip).
func askGzip(hr *http.Request) bool {
	if hr.Method == "HEAD" || hr.Header.Get("Range") != "" {
		return false
	}
	hr.Header.Set("Accept-Encoding", "gzip")
	return true
}

// onlyGzip reports whether gzip is the one coding h names.
func onlyGzip(h http.Header) bool {
	ce := h.Values("Content-Encoding")
	return len(ce) == 1 && strings.EqualFold(strings.TrimSpace(ce[0]), "gzip")
}

// encoded reports whether the Content-Encoding values ce name a coding
// other than identity.
func encoded(ce []string) bool {
	for _, v := range ce {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return true
			}
		}
	}
	return false
}

// gzipBound is the most bytes of a gzip body that decodes to at most max
// bytes: gzip stores data that does not compress with 5 bytes a block of
// 65,535 and 18 of header and trailer (the bound leaves room to spare).
// The host reads no more of a gzip body: max bounds what it decodes to, and
// gzip can take any number of bytes to decode to nothing (empty members,
// one after another).
func gzipBound(max int64) int64 { return max + max/1024 + 1024 }

var errPastGzipBound = errors.New("a gzip body past its bound")

// cappedBody is a body of which at most left bytes are read: past them,
// a read fails with errPastGzipBound.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errPastGzipBound
	}
	n, err := b.ReadCloser.Read(p[:min(int64(len(p)), b.left)])
	b.left -= int64(n)
	return n, err
}

// gunzip is body decoded from gzip, read when it is first read (so that
// readBody's time limits hold for gzip's header too), and empty for an
// empty body, as net/http takes it; closing it closes body.
func gunzip(body io.ReadCloser) io.ReadCloser {
	return &gzipBody{body: body}
}

type gzipBody struct {
	body io.ReadCloser
	zr   io.Reader
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.zr == nil {
		br := bufio.NewReader(g.body)
		if _, err := br.Peek(1); err != nil {
			return 0, err // io.EOF for an empty body
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			return 0, err
		}
		g.zr = zr
	}
	return g.zr.Read(p)
}

func (g *gzipBody) Close() error { return g.body.Close() }

// headersFor is the request's headers as sent: the guest's, less those
// the transport sets itself, with the secrets for u's host set; and
// whether it set any. Accept-Encoding is the host's too: it asks for
// gzip and decodes it (askGzip, gunzip), so that the body is searched for
// secrets, and bounded, as the tool reads it.
func (g *Guard) headersFor(h map[string][]string, u *url.URL) (http.Header, bool) {
	out := http.Header{}
	for k, vs := range h {
		k = http.CanonicalHeaderKey(k)
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Proxy-Connection", "Upgrade", "Te", "Trailer", "Accept-Encoding":
			continue
		}
		out[k] = append([]string(nil), vs...)
	}
	port := portOf(u)
	carried := false
	for _, s := range g.secrets {
		if s.matches(strings.ToLower(u.Hostname()), port) {
			out.Set(s.header, s.value)
			carried = true
		}
	}
	return out, carried
}

func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}
