package netguard

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/cairnrun/cairn/abi"
)

// Errors a caller branches on.
var (
	// ErrRefused is a request the grant does not allow; nothing was sent.
	ErrRefused = errors.New("refused by the network grant")
	// ErrNotSent is a request that reached no peer: no connection was
	// obtained for it (a refused connection, a name that does not resolve,
	// a TLS handshake that failed, a time limit that ran out before it
	// connected), so no byte of it was written and sending it again is
	// safe.
	ErrNotSent = errors.New("not sent")
	// ErrNotProcessed is a request that reached an HTTP/2 server which
	// said it did not process it: it reset the request's stream with
	// REFUSED_STREAM (RFC 9113, section 8.7), or went away (GOAWAY)
	// naming an earlier request as the last it processed (section 6.8).
	// It was sent once, and the remote side did not act on it, so sending
	// it again is safe. The error's text is that the tool is told.
	ErrNotProcessed = errors.New("not processed")
	// ErrBadRule is an allow entry or secret that does not read.
	ErrBadRule = errors.New("bad network grant")
)

// Defaults of the zero fields of Rules.
const (
	DefaultMaxRequests      = 20
	DefaultMaxRequestBytes  = 1 << 20
	DefaultMaxResponseBytes = 4 << 20
	DefaultTimeout          = 30 * time.Second
	// MaxHeaders and MaxHeaderBytes bound a request's headers, and
	// MaxHeaderBytes a response's.
	MaxHeaders     = 64
	MaxHeaderBytes = 64 << 10
	// MaxResponseLimit is the most Rules.MaxResponseBytes may be: a
	// response reaches the tool as one message of the ABI, at most
	// abi.MaxNetMessage (16 MiB) with its headers, and this leaves 1 MiB
	// of it for them.
	MaxResponseLimit = abi.MaxNetMessage - 1<<20
	// MaxRequestLimit is the most Rules.MaxRequestBytes may be: a
	// request comes from the tool as one message of the ABI too, with its
	// URL and headers.
	MaxRequestLimit = abi.MaxNetMessage - 1<<20
)

// DefaultMethods are the methods of Rules without Methods: those that ask
// for something and change nothing.
var DefaultMethods = []string{"GET", "HEAD"}

// Rules are a module's network grant.
type Rules struct {
	// Allow lists what a request may reach: "api.example.com",
	// "api.example.com:8443", "*.example.org" (its subdomains, not itself),
	// "*" (any name), "203.0.113.7", "[2001:db8::1]:443". An entry without
	// a port allows ports 80 and 443. Names reach public addresses only; an
	// address in a special range (see Special) is reached only through an
	// entry that is that address, or "localhost" for loopback.
	Allow []string
	// Methods allowed; nil means DefaultMethods.
	Methods []string
	// Bounds of one call: requests, bytes of one request body (at most
	// MaxRequestLimit), bytes of one response body (at most
	// MaxResponseLimit), and the time one exchange may take. Zero means
	// the Default of each.
	MaxRequests                       int
	MaxRequestBytes, MaxResponseBytes int64
	Timeout                           time.Duration
	// Secrets are headers the host adds to requests for a host.
	Secrets []Secret
	// Resolver finds a name's addresses; nil means net.DefaultResolver.
	// Tests stand in their own.
	Resolver Resolver
}

// Resolver finds the addresses of a name.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Secret is a header the host sets on every request to a host that
// Host matches (an allow entry's form); the guest never holds its value.
// It is sent over https only, but to a loopback, private, shared
// (100.64.0.0/10) or link-local address, or localhost: a plain http request that would carry it is
// refused.
type Secret struct {
	Host, Header, Value string
	// Hide are the parts of Value that are the secret proper (what the
	// agent file took from the environment): what is recorded holds
	// neither Value nor any of them. For a Value of Basic credentials
	// ("Basic " and base64 of user:password), the guard hides their
	// decoded parts too (basicParts).
	Hide []string
}

// basicParts are the parts of v, if it is Basic credentials, that are
// secret and that a server may echo decoded: user:password, and the
// password, or the user name when no password follows it (an API key
// given as the user name). The user name alone is no secret.
//
// # Errors
//
// Basic credentials that are not base64 of user:password (the host does
// not encode them).
func basicParts(v string) ([]string, error) {
	scheme, creds, _ := strings.Cut(strings.TrimSpace(v), " ")
	if !strings.EqualFold(scheme, "Basic") {
		return nil, nil
	}
	d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(creds))
	user, pass, ok := strings.Cut(string(d), ":")
	if err != nil || !ok || user+pass == "" {
		return nil, errors.New(`its value is Basic credentials that are not base64 of user:password: write "Basic ${NAME}", NAME holding that base64 (the host does not encode them)`)
	}
	if pass == "" {
		return []string{string(d), user}, nil
	}
	return []string{string(d), pass}, nil
}

// entry is one parsed allow entry.
type entry struct {
	host     string // normal form; "" for "*"
	wildcard bool   // "*.host"
	addr     bool   // host is an IP address
	ports    []int
}

// parseEntry reads one allow entry.
//
// # Errors
//
// ErrBadRule, saying what is wrong.
func parseEntry(s string) (entry, error) {
	if strings.Contains(s, "://") || strings.Contains(s, "/") {
		return entry{}, fmt.Errorf("%w: allow entry %q: write a host, or a host and port (api.example.com:8443), not a URL", ErrBadRule, s)
	}
	host, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else if strings.Count(s, ":") == 1 {
		return entry{}, fmt.Errorf("%w: allow entry %q: %v", ErrBadRule, s, err)
	}
	e := entry{ports: []int{80, 443}}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return entry{}, fmt.Errorf("%w: allow entry %q: port %q", ErrBadRule, s, port)
		}
		e.ports = []int{n}
	}
	if host == "*" {
		return e, nil
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host, e.wildcard = rest, true
	}
	h, isAddr, err := NormalHost(host)
	if err != nil {
		return entry{}, fmt.Errorf("%w: allow entry %q: %v", ErrBadRule, s, err)
	}
	if isAddr && e.wildcard {
		return entry{}, fmt.Errorf("%w: allow entry %q: a wildcard of an address", ErrBadRule, s)
	}
	e.host, e.addr = h, isAddr
	return e, nil
}

// matches reports whether the entry allows the normal host h at port.
func (e entry) matches(h string, port int) bool {
	portOK := false
	for _, p := range e.ports {
		portOK = portOK || p == port
	}
	switch {
	case !portOK:
		return false
	case e.host == "":
		_, err := netip.ParseAddr(h)
		return err != nil // "*" is any name, never an address
	case e.wildcard:
		return strings.HasSuffix(h, "."+e.host)
	}
	return h == e.host
}

// permits reports whether the entry lets a request reach address a, one
// in a special range; a public address any matching entry permits.
func (e entry) permits(a netip.Addr) bool {
	a = a.WithZone("") // an entry names no zone (NormalHost refuses one)
	if e.addr {
		return e.host == a.Unmap().String()
	}
	return e.host == "localhost" && !e.wildcard && a.Unmap().IsLoopback()
}

// Covers reports whether the allow entries cover need, an entry a tool's
// manifest asks for: an entry whose host covers the need's (the same
// host; "*.x" covers "a.x" and "*.a.x"; "*" covers every name but
// localhost, and every name wildcard) and, when the need names a port,
// allows that port. A need without a port asks for the host, on whatever
// port the grant allows.
func Covers(allow []string, need string) bool {
	n, err := parseEntry(need)
	if err != nil {
		return false
	}
	_, _, perr := net.SplitHostPort(need)
	anyPort := perr != nil
	for _, s := range allow {
		e, err := parseEntry(s)
		if err != nil || !e.coversHost(n) {
			continue
		}
		if anyPort || containsInt(e.ports, n.ports[0]) {
			return true
		}
	}
	return false
}

// coversHost reports whether e reaches every host n names. "*" reaches
// any name but localhost, which an entry of its own lets reach loopback
// addresses, where "*" reaches public ones only (permits).
func (e entry) coversHost(n entry) bool {
	switch {
	case e.host == "":
		return !n.addr && (n.wildcard || n.host != "localhost")
	case e.wildcard:
		return !n.addr && strings.HasSuffix(n.host, "."+e.host)
	}
	return !n.wildcard && n.host == e.host
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
