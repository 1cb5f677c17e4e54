package host

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// NetGrant is a module's network grant in the agent file (docs/network.md):
//
//	grant:
//	  net:
//	    allow: [api.example.com, "*.example.org:443"]
//	    methods: [GET, POST]
//	    max_requests: 20
//	    max_request_bytes: 1MiB
//	    max_response_bytes: 4MiB
//	    timeout: 30s
//	    secrets:
//	      - {host: api.example.com, header: Authorization, value: "Bearer ${API_TOKEN}"}
//
// Without one a module has no network: one that imports it does not
// start. Zero limits take netguard's defaults; no methods means GET and
// HEAD.
type NetGrant struct {
	Allow            []string    `yaml:"allow" json:"allow"`
	Methods          []string    `yaml:"methods" json:"methods,omitempty"`
	MaxRequests      int         `yaml:"max_requests" json:"max_requests,omitempty"`
	MaxRequestBytes  Size        `yaml:"max_request_bytes" json:"max_request_bytes,omitempty"`
	MaxResponseBytes Size        `yaml:"max_response_bytes" json:"max_response_bytes,omitempty"`
	Timeout          Duration    `yaml:"timeout" json:"timeout,omitempty"`
	Secrets          []NetSecret `yaml:"secrets" json:"secrets,omitempty"`
}

// mutates reports whether the grant lets a request change what is on the
// remote side: a method it allows is not one safe to repeat (no methods
// allow GET and HEAD only).
func (g NetGrant) mutates() bool {
	for _, m := range g.Methods {
		if (conversation.Exchange{Method: strings.ToUpper(m)}).Mutating() {
			return true
		}
	}
	return false
}

// NetSecret is a header the host sets on requests to Host. Value is
// written with ${NAME} references to the host's environment, read when
// the agent starts; the guest never sees it and the journal never holds it.
type NetSecret struct {
	Host   string `yaml:"host" json:"host"`
	Header string `yaml:"header" json:"header"`
	Value  string `yaml:"value" json:"value"`
}

// ErrSecretUnset is a secret whose environment variable is not set, or
// is set to nothing: a header with no key in it, and a secret that is
// only the words around it.
var ErrSecretUnset = errors.New("secret's environment variable is not set or empty")

// rules reads the grant into netguard's rules, taking the secrets'
// values from the environment.
//
// # Errors
//
// ErrSecretUnset naming the variable; netguard.ErrBadRule naming a
// variable that holds a control character, which no header value may.
func (g NetGrant) rules() (netguard.Rules, error) {
	r := netguard.Rules{Allow: g.Allow, Methods: g.Methods, MaxRequests: g.MaxRequests,
		MaxRequestBytes: int64(g.MaxRequestBytes), MaxResponseBytes: int64(g.MaxResponseBytes), Timeout: time.Duration(g.Timeout)}
	for _, s := range g.Secrets {
		var unset, control, hide []string
		v := os.Expand(s.Value, func(name string) string {
			v, ok := os.LookupEnv(name)
			switch {
			case !ok:
				unset = append(unset, name+" is not set")
			case v == "":
				unset = append(unset, name+" is empty")
			case netguard.HasControl(v):
				control = append(control, name)
			default:
				hide = append(hide, v) // "Bearer ${TOKEN}": the token is the secret
			}
			return v
		})
		if len(unset) > 0 {
			return r, fmt.Errorf("%w: %s (for the %s header to %s)", ErrSecretUnset, strings.Join(unset, ", "), s.Header, s.Host)
		}
		if len(control) > 0 {
			return r, fmt.Errorf("%w: %s holds a control character, which no header value may (a newline at its end, from a file it was read from?): remove it (for the %s header to %s)",
				netguard.ErrBadRule, strings.Join(control, ", "), s.Header, s.Host)
		}
		r.Secrets = append(r.Secrets, netguard.Secret{Host: s.Host, Header: s.Header, Value: v, Hide: hide})
	}
	return r, nil
}

// netGuard makes the network guard of a module's grant; nil without one.
// It refuses a module that imports the network without a grant, and a
// grant that does not read.
func netGuard(m toolModule, g Grant) (*netguard.Guard, error) {
	imports, err := sandbox.ImportsNet(m.sections())
	if err != nil {
		return nil, nil // compiling reports it
	}
	if g.Net == nil {
		if imports {
			return nil, fmt.Errorf("%w: the module imports the network (%s), and its grant has no net: add net: {allow: [HOST...]} to its grant in the agent file",
				ErrGrant, abi.NetModule)
		}
		return nil, nil
	}
	rules, err := g.Net.rules()
	if err != nil {
		return nil, fmt.Errorf("grant net: %w", err)
	}
	guard, err := netguard.New(rules)
	if err != nil {
		return nil, fmt.Errorf("grant net: %w", err)
	}
	return guard, nil
}

// closeNet closes the connections the set's network grants keep alive,
// those that carried a secret among them, when the run ends: a guard
// keeps what it holds idle for net/http's idle timeout otherwise.
func (ts *toolset) closeNet() {
	if ts == nil {
		return
	}
	for _, t := range ts.tools {
		if t.guard != nil {
			t.guard.Close()
		}
	}
}

// missingNet lists what a tool asks of the network that its grant does
// not cover, as the agent file would say it.
func missingNet(t abi.Tool, g Grant) []string {
	var allow []string
	if g.Net != nil {
		allow = g.Net.Allow
	}
	var out []string
	for _, n := range t.Needs.Net {
		if !netguard.Covers(allow, n) {
			out = append(out, "net: {allow: ["+n+"]}")
		}
	}
	return out
}

// NetUsage is what a call used of the network: its exchanges and the
// bytes of their bodies.
type NetUsage struct {
	Requests      int   `json:"requests"`
	Refused       int   `json:"refused,omitempty"`
	SentBytes     int64 `json:"sent_bytes"`
	ReceivedBytes int64 `json:"received_bytes"`
}

// netUsage sums a call's exchanges; nil for a call that made none.
func netUsage(exs []conversation.Exchange) *NetUsage {
	if len(exs) == 0 {
		return nil
	}
	u := &NetUsage{}
	for _, e := range exs {
		if !e.Sent() {
			u.Refused++
			continue
		}
		u.Requests++
		u.SentBytes += e.RequestSize
		u.ReceivedBytes += e.ResponseSize
	}
	return u
}

// Net is a Net for one run of a module outside an agent (cairn exec):
// the grant's checks and limits, nothing journaled.
//
// # Errors
//
// Those of reading the grant: ErrSecretUnset, netguard.ErrBadRule.
func (g NetGrant) Net() (sandbox.Net, error) {
	rules, err := g.rules()
	if err != nil {
		return nil, err
	}
	guard, err := netguard.New(rules)
	if err != nil {
		return nil, err
	}
	return guard.Call(), nil
}
