// Package netguard is the network grant of a tool module and the client
// that enforces it: which hosts and ports a call may reach, with which
// methods, how many requests and bytes, in what time, and which secret
// headers the host adds for a host so that the guest never holds them.
//
// It is SSRF-safe by construction. A request's URL must be http or https,
// carry no credentials, and name a host and port an allow entry names;
// every spelling of an address (decimal, octal, hex, short IPv4 forms,
// IPv4-mapped IPv6) is read as the address it means first (NormalHost).
// When it is sent, the host is resolved, every address it resolves to is
// checked, the connection is made to a checked address and the address is
// checked again in the dialer's Control hook, so a second DNS answer
// cannot move it. Loopback, private, link-local, multicast, unspecified,
// CGNAT, cloud-metadata (169.254.169.254, fd00:ec2::254) and other special
// ranges (Special) are reached only through an allow entry that is that
// very address, or "localhost" for loopback, which in turn reaches
// loopback addresses only. Redirects are not followed:
// a 3xx is the response, and the guest's client follows it with a new
// request, checked like the first. No proxy is taken from the
// environment; TLS is verified against the system's roots.
//
// Redact and RedactURL say what of an exchange may be recorded;
// HideSecrets what of a response's headers the tool may be given, and
// Client.RoundTrip gives it a body alike: none of the secret values,
// which a server may echo (in a redirect's Location, in a body), in any
// case, percent-encoded, JSON-escaped or base64-encoded (find.go).
package netguard
