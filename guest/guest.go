// Package guest is the Go SDK for cairn tool authors. A tool is a main
// package that hands typed handlers to Main and is built for WASI:
//
//	package main
//
//	import (
//		"os"
//		"strings"
//
//		"github.com/cairnrun/cairn/abi"
//		"github.com/cairnrun/cairn/guest"
//	)
//
//	type shoutIn struct {
//		Path string `json:"path" desc:"a file in the workspace"`
//	}
//
//	func main() {
//		guest.Main(guest.Define("shout", "Returns a file in capitals.",
//			func(c *guest.Call, in shoutIn) (string, error) {
//				b, err := os.ReadFile(c.Path(in.Path))
//				return strings.ToUpper(string(b)), err
//			}, guest.Needs(abi.Needs{Workspace: abi.AccessReadOnly})))
//	}
//
// Build it and write its manifest into it:
//
//	GOOS=wasip1 GOARCH=wasm go build -o shout.wasm .
//	cairn tools pack shout.wasm
//
// That is a command module: every call initialises the Go runtime afresh,
// which costs milliseconds. In the fast mode (see abi, "The fast mode") the
// host initialises the module once and starts every call from a snapshot
// of it. For that, register the tools in an init function with Export,
// let main call Main with no tools, and build a reactor:
//
//	func init() { guest.Export(shout) }
//	func main() { guest.Main() }
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o shout.wasm .
//
// Package state set up at initialisation is then shared by every call as
// it was after init; the arguments and environment are read again for
// every call. Read clocks and randomness in the handler, not in init: what
// init read is the snapshot's, the same in every call.
//
// The input type's JSON Schema is derived from the struct: `json` tags name
// the fields, a `desc` tag describes one, and a field is required unless it
// is a pointer or tagged omitempty. The host validates the model's
// arguments against it before the tool runs; Serve decodes them strictly,
// so a handler always gets a well-formed value.
//
// A handler's error becomes the call's error result, which the model reads:
// write it as advice ("old_text occurs 3 times; give more context"). A panic
// is recovered into an error result too. The package is plain Go with no
// build tags, so tools can be unit-tested on the host with Serve.
package guest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/cairnrun/cairn/abi"
)

// Tool is one tool: its description for the manifest and its handler.
type Tool struct {
	spec abi.Tool
	run  func(c *Call, input string) (string, error)
	warm func() // fills the caches decoding its input builds; see warmUp
}

// Option changes a Tool's description.
type Option func(*abi.Tool)

// Mutates marks a tool that changes the workspace.
func Mutates() Option { return func(t *abi.Tool) { t.Mutates = true } }

// Idempotent marks a tool for which running twice has the effect of once.
func Idempotent() Option { return func(t *abi.Tool) { t.Idempotent = true } }

// Needs says what the tool asks of the sandbox.
func Needs(n abi.Needs) Option { return func(t *abi.Tool) { t.Needs = n } }

// Define makes a tool whose input is decoded into In, a struct type:
// models take a tool's input as a JSON object only, and `cairn tools pack`
// refuses a tool whose input schema is of another type.
func Define[In any](name, description string, fn func(c *Call, in In) (string, error), opts ...Option) Tool {
	var zero In
	spec := abi.Tool{Name: name, Description: description, InputSchema: SchemaOf(zero)}
	for _, o := range opts {
		o(&spec)
	}
	return Tool{spec: spec, run: func(c *Call, input string) (string, error) {
		var in In
		if err := decodeStrict(input, &in); err != nil {
			return "", fmt.Errorf("invalid arguments for %s: %w", name, err)
		}
		return fn(c, in)
	}, warm: func() {
		var in In
		decodeStrict("{}", &in)
	}}
}

// Spec is the tool's description as it appears in the manifest.
func (t Tool) Spec() abi.Tool { return t.spec }

// Call is the context of one call.
type Call struct {
	// ID is the call's id, stable across restarts of the host.
	ID string
	// Workspace is the guest path of the workspace directory.
	Workspace string
}

// Path resolves a path the model gave against the workspace. It keeps the
// result inside the workspace lexically ("../x" is "x"); the sandbox is
// what stops a tool from reaching outside.
func (c *Call) Path(p string) string {
	return path.Join(c.Workspace, path.Clean("/"+p))
}

// ManifestOf is the manifest of a module that carries tools.
func ManifestOf(tools ...Tool) abi.Manifest {
	m := abi.Manifest{ABI: abi.Version}
	for _, t := range tools {
		m.Tools = append(m.Tools, t.spec)
	}
	return m
}

// Main serves one call from stdin to stdout and exits, or, given the
// argument --cairn-manifest, writes the module's manifest and exits. With
// no tools it serves those registered with Export.
func Main(tools ...Tool) {
	if len(tools) == 0 {
		tools = exportedTools()
	}
	os.Exit(serveArgs(os.Args, os.Stdin, os.Stdout, tools))
}

// Serve reads one request from r, runs the tool it names and writes one
// response to w. It returns the process exit code: 0 when a response was
// written, whether or not the tool failed; 1 when none could be.
func Serve(r io.Reader, w io.Writer, tools ...Tool) int {
	in, err := io.ReadAll(io.LimitReader(r, abi.MaxMessageSize+1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "read request:", err)
		return 1
	}
	resp := handle(in, tools)
	// A tool's output may be any bytes (a file it read, say); the response
	// carries UTF-8 text, so each sequence that is not becomes U+FFFD.
	resp.Output, resp.Error = abi.ValidText(resp.Output), abi.ValidText(resp.Error)
	b, err := abi.Marshal(resp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "encode response:", err)
		return 1
	}
	if _, err := w.Write(b); err != nil {
		fmt.Fprintln(os.Stderr, "write response:", err)
		return 1
	}
	return 0
}

func handle(in []byte, tools []Tool) abi.Response {
	resp := abi.Response{ABI: abi.Version}
	req, err := abi.DecodeRequest(in)
	if err != nil {
		resp.Error = err.Error()
		return resp
	}
	for _, t := range tools {
		if t.spec.Name == req.Tool {
			resp.Output, err = runRecovered(t, &Call{ID: req.CallID, Workspace: req.Workspace}, req.Input)
			if err != nil {
				resp.Output, resp.Error = "", err.Error()
			}
			return resp
		}
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.spec.Name
	}
	resp.Error = fmt.Sprintf("this module has no tool %q; it has %s", req.Tool, strings.Join(names, ", "))
	return resp
}

func runRecovered(t Tool, c *Call, input string) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("tool %s panicked: %v", t.spec.Name, p)
		}
	}()
	return t.run(c, input)
}

func decodeStrict(input string, v any) error {
	if strings.TrimSpace(input) == "" {
		input = "{}"
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(input)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
