package netguard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairnrun/cairn/abi"
)

// Guard is a module's network grant made ready: its allow list read, and
// the HTTP transport its calls share. It is safe for concurrent use; each
// call takes a Client of its own.
type Guard struct {
	rules   Rules
	entries []entry
	secrets []secretRule
	// hidden finds the secrets' values in what the tool is given.
	hidden  *finder
	methods map[string]bool
	// mu guards the transports, which leave replaces (left.go), and
	// left, those it replaced.
	mu        sync.Mutex
	left      []*http.Transport
	transport *http.Transport
	// once is transport's like, but for a connection per request: for
	// a request transport would send again (see prepare).
	once *http.Transport
	// h2 are the transports whose HTTP/2 connections transport and
	// once use (sendOnceH2).
	h2 []*http.Transport
	// connectAttempt bounds one connection attempt (see dial).
	connectAttempt time.Duration
}

// connectAttempt is how long one connection attempt may take, when the
// request's deadline is later: past it, a name's next address is tried,
// within that deadline (dialBy).
const connectAttempt = 10 * time.Second

type secretRule struct {
	entry
	header, value string
	hide          []string
}

// New reads rules.
//
// # Errors
//
// ErrBadRule for an allow entry, secret host or method that does not read,
// for a negative limit, for a MaxResponseBytes past MaxResponseLimit or a
// MaxRequestBytes past MaxRequestLimit, for a secret whose header name is
// not a token or whose value holds a control character, and for a secret
// of Basic credentials that are not base64 of user:password.
func New(rules Rules) (*Guard, error) {
	if err := rules.checkLimits(); err != nil {
		return nil, err
	}
	if rules.MaxResponseBytes > MaxResponseLimit {
		return nil, fmt.Errorf("%w: net: {max_response_bytes} of %d bytes is more than %d (15 MiB), the most one response can bring a tool (its messages hold %d bytes, headers included): lower it",
			ErrBadRule, rules.MaxResponseBytes, MaxResponseLimit, abi.MaxNetMessage)
	}
	if rules.MaxRequestBytes > MaxRequestLimit {
		return nil, fmt.Errorf("%w: net: {max_request_bytes} of %d bytes is more than %d (15 MiB), the most one request body can come from a tool in (its messages hold %d bytes, URL and headers included): lower it",
			ErrBadRule, rules.MaxRequestBytes, MaxRequestLimit, abi.MaxNetMessage)
	}
	g := &Guard{rules: rules, methods: map[string]bool{}, connectAttempt: connectAttempt}
	for _, s := range rules.Allow {
		e, err := parseEntry(s)
		if err != nil {
			return nil, err
		}
		g.entries = append(g.entries, e)
	}
	for _, s := range rules.Secrets {
		e, err := parseEntry(s.Host)
		if err != nil {
			return nil, fmt.Errorf("secret for %q: %w", s.Host, err)
		}
		if s.Header == "" {
			return nil, fmt.Errorf("%w: secret for %q names no header", ErrBadRule, s.Host)
		}
		if !validHeaderName(s.Header) {
			return nil, fmt.Errorf("%w: secret for %q: header name %s is not a token", ErrBadRule, s.Host, quoted(s.Header))
		}
		if HasControl(s.Value) {
			return nil, fmt.Errorf("%w: secret for %q, header %s: its value holds a control character, which no header value may: remove it", ErrBadRule, s.Host, s.Header)
		}
		if !g.allows(e) {
			return nil, fmt.Errorf("%w: secret for %q: no allow entry reaches that host, so it would never be sent", ErrBadRule, s.Host)
		}
		basic, err := basicParts(s.Value)
		if err != nil {
			return nil, fmt.Errorf("%w: secret for %q, header %s: %v", ErrBadRule, s.Host, s.Header, err)
		}
		g.secrets = append(g.secrets, secretRule{entry: e, header: http.CanonicalHeaderKey(s.Header), value: s.Value,
			hide: append(slices.Clone(s.Hide), basic...)})
	}
	g.hidden = newFinder(g.SecretValues())
	methods := rules.Methods
	if methods == nil {
		methods = DefaultMethods
	}
	for _, m := range methods {
		// A grant names methods in any case (post is POST); CONNECT, a
		// tunnel past every check here, in none.
		m = strings.ToUpper(m)
		if !validHeaderName(m) || m == "CONNECT" {
			return nil, fmt.Errorf("%w: method %q", ErrBadRule, m)
		}
		g.methods[m] = true
	}
	g.transport, g.once = g.newTransport(true), g.newTransport(false)
	return g, nil
}

// checkLimits refuses a negative limit: zero takes the default, and a
// negative one, taken as zero, would say a limit the grant does not have.
func (r Rules) checkLimits() error {
	for _, l := range []struct {
		field    string
		v, deflt any
		negative bool
	}{
		{"max_requests", r.MaxRequests, DefaultMaxRequests, r.MaxRequests < 0},
		{"max_request_bytes", r.MaxRequestBytes, DefaultMaxRequestBytes, r.MaxRequestBytes < 0},
		{"max_response_bytes", r.MaxResponseBytes, DefaultMaxResponseBytes, r.MaxResponseBytes < 0},
		{"timeout", r.Timeout, DefaultTimeout, r.Timeout < 0},
	} {
		if l.negative {
			return fmt.Errorf("%w: net: {%s} of %v is negative: give a positive value, or leave it out for the default (%v)", ErrBadRule, l.field, l.v, l.deflt)
		}
	}
	return nil
}

// allows reports whether an allow entry reaches a secret's entry: for a
// secret of one host, one of its ports (localhost not by "*", which
// reaches public addresses only); a secret of a wildcard or of any name
// is taken as it is.
func (g *Guard) allows(secret entry) bool {
	if secret.host == "" || secret.wildcard {
		return true
	}
	for _, a := range g.entries {
		for _, p := range secret.ports {
			if a.coversHost(secret) && containsInt(a.ports, p) {
				return true
			}
		}
	}
	return false
}

// newTransport is the guard's transport: no proxy from the environment,
// TLS verified with the system roots, every connection dialled by dial,
// kept alive or not, HTTP/1.1 read an answer at a time (framedConn), and
// HTTP/2 that sends no request twice (sendOnceH2).
func (g *Guard) newTransport(keepAlive bool) *http.Transport {
	t := g.transportConfig(keepAlive)
	t.DialContext, t.DialTLSContext = g.dialFramed, g.dialTLS(t) // keepalive.go
	h2, twin := sendOnceH2(g.transportConfig(keepAlive))
	if h2 != nil {
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{"h2": h2}
		t.TLSClientConfig = twin.TLSClientConfig.Clone() // offers h2, then http/1.1
		g.h2 = append(g.h2, twin)
	}
	return t
}

// transportConfig is a transport with the guard's settings.
func (g *Guard) transportConfig(keepAlive bool) *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            g.dial,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: MaxHeaderBytes,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		DisableKeepAlives:      !keepAlive,
	}
}

// Close drops the guard's idle connections; those of transports a
// request was left to (left.go) without waiting for them.
func (g *Guard) Close() {
	g.mu.Lock()
	current := append([]*http.Transport{g.transport, g.once}, g.h2...)
	left := g.left
	g.left = nil
	g.mu.Unlock()
	for _, t := range current {
		t.CloseIdleConnections()
	}
	for _, t := range left {
		go t.CloseIdleConnections()
	}
}

// allowed returns the entries that allow host h at port.
func (g *Guard) allowed(h string, port int) []entry {
	var out []entry
	for _, e := range g.entries {
		if e.matches(h, port) {
			out = append(out, e)
		}
	}
	return out
}

// addrAllowed reports whether a request allowed by entries may reach a.
func addrAllowed(entries []entry, a netip.Addr) bool {
	if !Special(a) {
		return true
	}
	for _, e := range entries {
		if e.permits(a) {
			return true
		}
	}
	return false
}

// dial connects to addr ("host:port" of a request the guard admitted):
// it resolves the host, refuses it if any of its addresses is one the
// allow list does not permit, and connects to a checked address itself,
// checking it once more in the dialer's Control hook, so that no second
// resolution (DNS rebinding) can send the connection elsewhere. localhost
// reaches loopback addresses only: a secret goes to it over plain http.
// The whole dial, resolution and every address tried, ends with the
// request it dials for, by its deadline or its cancellation (dialBy),
// each attempt within it bounded by connectAttempt.
func (g *Guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, _ := strconv.Atoi(portText)
	h, isAddr, err := NormalHost(host)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	entries := g.allowed(h, port)
	if len(entries) == 0 {
		return nil, fmt.Errorf("%w: %s is not in the allow list", ErrRefused, net.JoinHostPort(h, portText))
	}
	ctx, cancel := g.dialBy(ctx)
	defer cancel()
	addrs, err := g.resolve(ctx, h, isAddr)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if !addrAllowed(entries, a) {
			at := net.JoinHostPort(a.WithZone("").String(), portText)
			return nil, fmt.Errorf("%w: %s resolves to %s, a loopback, private, link-local or otherwise special address, and a name reaches public addresses only: to reach it, send the request to %s itself, with an allow entry of it (net: {allow: [%q]})", ErrRefused, h, a, at, at)
		}
		if h == "localhost" && !a.Unmap().WithZone("").IsLoopback() {
			return nil, fmt.Errorf("%w: localhost resolves to %s, which is not a loopback address; localhost reaches this machine's own loopback only (see its entry in the hosts file, or the DNS that answered for it)", ErrRefused, a)
		}
	}
	d := net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !addrAllowed(entries, ap.Addr()) || h == "localhost" && !ap.Addr().Unmap().WithZone("").IsLoopback() {
			return fmt.Errorf("%w: connecting to %s", ErrRefused, address)
		}
		return nil
	}}
	by := dialDeadline(ctx)
	var last error = os.ErrDeadlineExceeded
	for _, a := range addrs {
		if !time.Now().Before(by) {
			break // no address is tried, no socket made, past the deadline
		}
		at := netip.AddrPortFrom(a, uint16(port)).String()
		d.Deadline = time.Now().Add(g.connectAttempt)
		c, err := d.DialContext(ctx, network, at)
		if err == nil {
			return c, nil
		}
		last = err
		var ne net.Error
		if d.Deadline.Before(by) && ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
			last = fmt.Errorf("connect to %s: not completed within %s, the bound of one connection attempt (the peer never answered: an address whose packets are dropped, or a server whose queue of connections is full): %w",
				at, g.connectAttempt, err)
		}
	}
	return nil, last
}

// dialForKey is the context key of the request a connection is made for
// (withDialFor); dialingKey that of a dial's deadline, in a dial's context
// (dialBy).
type (
	dialForKey struct{}
	dialingKey struct{}
)

// withDialFor is ctx, a request's, kept in its own values for the dial of
// its connection. net/http dials with the request's values but not its
// deadline or its cancellation, and dials on when the request has ended,
// for a request to come: the request kept so ends that dial too.
func withDialFor(ctx context.Context) context.Context {
	return context.WithValue(ctx, dialForKey{}, ctx)
}

// dialBy is ctx, a dial's, ended with the request it dials for
// (withDialFor): by its deadline, the grant's timeout from its start, or
// at once when it is cancelled (its call stopped), its context's cause
// the request's; or, for a dial for no request, by the grant's timeout
// from now. The whole dial, every address of a name and the TLS
// handshake, ends with it, and no socket it made outlives it. A dial's
// context (dialTLS's, for dial) is given as it is.
func (g *Guard) dialBy(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Value(dialingKey{}).(time.Time); ok {
		return ctx, func() {}
	}
	req, ok := ctx.Value(dialForKey{}).(context.Context)
	if !ok {
		ctx, cancel := context.WithTimeout(ctx, orDefault(g.rules.Timeout, DefaultTimeout))
		by, _ := ctx.Deadline()
		return context.WithValue(ctx, dialingKey{}, by), cancel
	}
	by, ok := req.Deadline()
	if !ok {
		by = time.Now().Add(orDefault(g.rules.Timeout, DefaultTimeout))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(req, func() { cancel(context.Cause(req)) })
	return context.WithValue(ctx, dialingKey{}, by), func() {
		stop()
		cancel(nil)
	}
}

// dialDeadline is the time by which the dial of ctx, a dial's context
// (dialBy), ends.
func dialDeadline(ctx context.Context) time.Time {
	by, _ := ctx.Value(dialingKey{}).(time.Time)
	return by
}

// resolve finds the addresses of the normal host h.
func (g *Guard) resolve(ctx context.Context, h string, isAddr bool) ([]netip.Addr, error) {
	if isAddr {
		return []netip.Addr{netip.MustParseAddr(h)}, nil
	}
	var r Resolver = net.DefaultResolver
	if g.rules.Resolver != nil {
		r = g.rules.Resolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", h)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", h, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", h)
	}
	out := make([]netip.Addr, len(addrs)) // the resolver's may be shared: a cache's
	for i, a := range addrs {
		out[i] = a.Unmap()
	}
	return out, nil
}
