package host

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// Regression: a sub-agent's allow entry localhost was taken as reached by
// its parent's *, which allows any name, so it was let through; but *
// reaches public addresses only, and localhost reaches the host's own
// loopback: the sub-agent reached a loopback server its parent could not.
// localhost is reached only by an entry of localhost itself.
func TestSubAgentLocalhostUnderParentsAnyNameIsRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "local") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	local := "http://localhost:" + port + "/"
	send := func(g NetGrant) error {
		n, err := g.Net()
		if err != nil {
			t.Fatal(err)
		}
		_, err = n.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: local})
		return err
	}
	if err := send(NetGrant{Allow: []string{"*:" + port}}); !errors.Is(err, netguard.ErrRefused) {
		t.Fatalf("the parent's grant, *:%s, sent to %s: %v", port, local, err)
	}
	if err := send(NetGrant{Allow: []string{"localhost:" + port}}); err != nil {
		t.Fatalf("the sub-agent's grant, localhost:%s: %v", port, err)
	}
	for _, tc := range []struct{ parent, kid string }{
		{`"*:` + port + `"`, `"localhost:` + port + `"`},
		{`"*"`, `localhost`},
		{`"*"`, `"localhost:443"`},
	} {
		af, err := ParseAgentFile([]byte(`name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - module: fetch
    grant: {net: {allow: [`+tc.parent+`]}}
agents:
  - name: kid
    description: k
    model: {provider: script, script: kid.yaml}
    tools:
      - {module: fetch, grant: {net: {allow: [`+tc.kid+`]}}}
`), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, err = af.SubAgentFile("kid")
		if want := "asks for net: {allow: [" + strings.Trim(tc.kid, `"`) + "]}"; !errors.Is(err, ErrSubAgent) || !strings.Contains(err.Error(), want) {
			t.Errorf("parent %s, kid %s: %v; want ErrSubAgent saying %q", tc.parent, tc.kid, err, want)
		}
	}
}
