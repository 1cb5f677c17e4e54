package host

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// narrowParent is a parent whose fetch module has a narrow network grant,
// whose MCP server offers one tool, and whose sandbox is small; each case
// adds a sub-agent under agents: from line 19.
const narrowParent = `name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
sandbox: {memory: 16MiB, timeout: 2s}
tools:
  - module: builtin
  - module: fetch
    grant:
      net:
        allow: [api.example.com, "127.0.0.1:8080"]
        max_requests: 5
        secrets: [{host: api.example.com, header: Authorization, value: "Bearer ${TOKEN}"}]
mcp:
  - name: t
    command: [srv]
    only: [safe]
    env: [PLAIN]
    headers: {}
agents:
`

// subAgentRefusal is what SubAgentFile (the check of a delegation and of a
// workflow's delegation step) says of the sub-agent kid, defined by child
// under narrowParent.
func subAgentRefusal(t *testing.T, child string) error {
	t.Helper()
	af, err := ParseAgentFile([]byte(narrowParent+child), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = af.SubAgentFile("kid")
	return err
}

const kidHead = `  - name: kid
    description: k
    model: {provider: script, script: kid.yaml}
`

// Regression: a sub-agent's network grant was never compared with its
// parent's: it could reach any host, use any method, add secrets and
// raise the limits. Now each is refused at load, naming the line.
func TestSubAgentNetGrantWiderThanParentsIsRefused(t *testing.T) {
	cases := []struct{ name, tools, want string }{
		{"any host", `    tools:
      - module: fetch
        grant: {net: {allow: ["*", "127.0.0.1:8080"], methods: [GET, POST], max_requests: 5}}
`, `line 24: sub-agent kid: tool module fetch asks for net: {allow: [*]}, net: {methods: [POST]}, which`},
		{"another port", `    tools:
      - {module: fetch, grant: {net: {allow: ["127.0.0.1:18089"]}}}
`, `asks for net: {allow: [127.0.0.1:18089]}`},
		{"both default ports of a host the parent has on one", `    tools:
      - {module: fetch, grant: {net: {allow: ["127.0.0.1"]}}}
`, `asks for net: {allow: [127.0.0.1]}`},
		{"a subdomain wildcard", `    tools:
      - {module: fetch, grant: {net: {allow: ["*.example.com"]}}}
`, `asks for net: {allow: [*.example.com]}`},
		{"a secret", `    tools:
      - module: fetch
        grant: {net: {allow: [api.example.com], max_requests: 1, secrets: [{host: api.example.com, header: X-Key, value: "${OTHER}"}]}}
`, `asks for net: {secrets: [{host: api.example.com, header: X-Key}]}`},
		{"limits", `    tools:
      - {module: fetch, grant: {net: {allow: [api.example.com], max_requests: 6, max_response_bytes: 8MiB, timeout: 1m}}}
`, `net: {max_requests: 6} (its parent's 5), net: {max_response_bytes: 8MiB} (its parent's 4MiB), net: {timeout: 1m0s} (its parent's 30s)`},
		{"net on a module whose parent grant has none", `    tools:
      - {module: builtin, grant: {workspace: rw, net: {allow: [api.example.com]}}}
`, `tool module builtin asks for net: (any network; its parent's grant has none)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := subAgentRefusal(t, kidHead+tc.tools)
			if !errors.Is(err, ErrSubAgent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want ErrSubAgent saying %q", err, tc.want)
			}
		})
	}
	narrower := kidHead + `    sandbox: {memory: 16MiB, timeout: 2s}
    tools:
      - module: fetch
        grant:
          net:
            allow: [api.example.com:443, "127.0.0.1:8080"]
            methods: [get]
            max_requests: 2
            secrets: [{host: api.example.com, header: authorization, value: "Bearer ${TOKEN}"}]
`
	if err := subAgentRefusal(t, narrower); err != nil {
		t.Fatalf("a narrower network grant was refused: %v", err)
	}
}

// Regression: a run whose sub-agent widens its parent's network grant
// started (the review's repro: a child allowed "*" and four methods under
// a parent that allowed one address); now it does not, and nothing is
// stored.
func TestSubAgentNetGrantWiderRunDoesNotStart(t *testing.T) {
	eng, store := fileEngine(t)
	af := teamIn(t, `name: netparent
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - module: fetch
    grant: {net: {allow: ["127.0.0.1:1"]}}
agents:
  - name: kid
    description: fetches
    model: {provider: script, script: alpha.yaml}
    tools:
      - module: fetch
        grant: {net: {allow: ["*", "127.0.0.1:18089"], methods: [GET, POST, PUT, DELETE]}}
`, teamScript, nil)
	_, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	want := "line 12: sub-agent kid: tool module fetch asks for net: {allow: [*]}, net: {allow: [127.0.0.1:18089]}, " +
		"net: {methods: [POST]}, net: {methods: [PUT]}, net: {methods: [DELETE]}"
	if !errors.Is(err, ErrSubAgent) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v; want ErrSubAgent saying %q", err, want)
	}
	if store.Exists("lead") {
		t.Fatal("a refused agent was kept")
	}
}

// Regression: a sub-agent's MCP server was matched by its name and
// command alone, so it could drop its parent's only:, add variables and
// headers (its secrets) or rename its tools with a prefix its parent's
// approval rules do not name. Now its entry must narrow the parent's.
func TestSubAgentMCPServerWiderThanParentsIsRefused(t *testing.T) {
	cases := []struct{ name, mcp, want string }{
		{"only dropped, env added", `    mcp:
      - name: t
        command: [srv]
        env: [SECRET_TOKEN]
`, `line 24: sub-agent kid: MCP server t asks for every tool of the server (its parent's only: [safe]), env: [SECRET_TOKEN]`},
		{"a tool the parent leaves out", `    mcp: [{name: t, command: [srv], only: [safe, danger]}]
`, `MCP server t asks for the tool danger`},
		{"a variable set to another value", `    mcp: [{name: t, command: [srv], only: [safe], env: ["PLAIN=x"]}]
`, `MCP server t asks for env: [PLAIN]`},
		{"a header", `    mcp: [{name: t, command: [srv], only: [safe], headers: {Authorization: "Bearer x"}}]
`, `MCP server t asks for headers: {Authorization}`},
		{"another prefix", `    mcp: [{name: t, command: [srv], only: [safe], prefix: x_}]
`, `MCP server t asks for prefix: "x_" (its parent's is "")`},
		{"another command", `    mcp: [{name: t, command: [srv, --all]}]
`, `MCP server t is not one of its parent's`},
		{"a longer time per call", `    sandbox: {memory: 16MiB, timeout: 2s}
    mcp: [{name: t, command: [srv], only: [safe]}]
    tools: [{module: builtin, limits: {timeout: 1s}}]
`, ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			child := kidHead + tc.mcp
			if !strings.Contains(child, "tools:") {
				child += "    tools: [{module: builtin}]\n    sandbox: {memory: 16MiB, timeout: 2s}\n"
			}
			err := subAgentRefusal(t, child)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("a narrower MCP server was refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrSubAgent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want ErrSubAgent saying %q", err, tc.want)
			}
		})
	}
}

// Regression: a sub-agent's sandbox limits were its own: under a parent
// with sandbox {timeout: 1ms} a child with {timeout: 1h} ran its calls for
// up to an hour. Now each limit a sub-agent's module or MCP server would
// run with (its sandbox:, the module's limits:, or its parent's sandbox
// limit where both leave it out) must be at most its parent's for that
// module, or the run does not start.
func TestSubAgentSandboxLimitsWiderThanParentsAreRefused(t *testing.T) {
	cases := []struct{ name, rest, want string }{
		{"sandbox", `    sandbox: {memory: 1GiB, timeout: 1h}
    tools: [{module: builtin}]
`, `line 24: sub-agent kid: tool module builtin would run with memory: 1GiB (its parent's 16MiB), timeout: 1h0m0s (its parent's 2s)`},
		{"module limits", `    sandbox: {memory: 16MiB, timeout: 2s}
    tools:
      - {module: builtin, limits: {output: 2MiB, stderr: 1MiB, stdin: 32MiB, files: 1000, staging: 1GiB, staged_paths: 20000}}
`, `output: 2MiB (its parent's 1MiB), stderr: 1MiB (its parent's 64KiB), stdin: 32MiB (its parent's 16MiB), ` +
			`files: 1000 (its parent's 256), staging: 1GiB (its parent's 256MiB), staged_paths: 20000 (its parent's 10000)`},
		{"an MCP server's calls", `    sandbox: {memory: 16MiB, timeout: 2s, output: 2MiB}
    tools: [{module: builtin, limits: {output: 1MiB}}]
    mcp: [{name: t, command: [srv], only: [safe]}]
`, `line 25: sub-agent kid: MCP server t: its calls would run with output: 2MiB (its parent's 1MiB)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := subAgentRefusal(t, kidHead+tc.rest)
			if !errors.Is(err, ErrSubAgent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want ErrSubAgent saying %q", err, tc.want)
			}
		})
	}
	narrower := kidHead + `    sandbox: {memory: 8MiB, timeout: 2s}
    tools: [{module: builtin, limits: {timeout: 1s}}]
`
	if err := subAgentRefusal(t, narrower); err != nil {
		t.Fatalf("narrower limits were refused: %v", err)
	}
	// Limits left out are the parent's, not the sandbox's wider defaults.
	if err := subAgentRefusal(t, kidHead+"    tools: [{module: builtin}]\n"); err != nil {
		t.Fatalf("a sub-agent that leaves its limits out was refused: %v", err)
	}
}
