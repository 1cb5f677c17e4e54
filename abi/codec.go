package abi

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxMessageSize bounds every message the codec decodes, so a hostile module
// cannot make the host allocate without limit.
const MaxMessageSize = 16 << 20

// Marshal encodes v (a Request, Response, Manifest, HTTPRequest or
// HTTPResponse, or a pointer to one) as deterministic CBOR: the same
// message is always the same bytes.
func Marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case Request:
		return encodeRequest(v), nil
	case *Request:
		return encodeRequest(*v), nil
	case Response:
		return encodeResponse(v), nil
	case *Response:
		return encodeResponse(*v), nil
	case Manifest:
		return encodeManifest(v), nil
	case *Manifest:
		return encodeManifest(*v), nil
	case HTTPRequest:
		return encodeHTTPRequest(v), nil
	case *HTTPRequest:
		return encodeHTTPRequest(*v), nil
	case HTTPResponse:
		return encodeHTTPResponse(v), nil
	case *HTTPResponse:
		return encodeHTTPResponse(*v), nil
	}
	return nil, fmt.Errorf("encode %T: not a message of the ABI", v)
}

// DecodeRequest decodes one Request and checks its version.
func DecodeRequest(b []byte) (Request, error) {
	var r Request
	d := reading(b, MaxMessageSize, false)
	r.read(&d)
	if err := d.end(); err != nil {
		return r, fmt.Errorf("decode request: %w", err)
	}
	if err := checkVersion(r.ABI); err != nil {
		return r, fmt.Errorf("decode request: %w", err)
	}
	return r, nil
}

// DecodeResponse decodes one Response and checks its version. Its output
// and error may be text strings that are not UTF-8, or byte strings: each
// byte sequence that is not UTF-8 becomes U+FFFD, so that a tool whose
// output is not text still answers, readably.
func DecodeResponse(b []byte) (Response, error) {
	var r Response
	d := reading(b, MaxMessageSize, true)
	r.read(&d)
	if err := d.end(); err != nil {
		return r, fmt.Errorf("decode response: %w", err)
	}
	r.Output, r.Error = ValidText(r.Output), ValidText(r.Error)
	if err := checkVersion(r.ABI); err != nil {
		return r, fmt.Errorf("decode response: %w", err)
	}
	return r, nil
}

// DecodeManifest decodes one Manifest and validates it.
func DecodeManifest(b []byte) (Manifest, error) {
	var m Manifest
	d := reading(b, MaxMessageSize, false)
	m.read(&d)
	if err := d.end(); err != nil {
		return m, fmt.Errorf("decode manifest: %w", err)
	}
	if err := m.Validate(); err != nil {
		return m, fmt.Errorf("invalid manifest: %w", err)
	}
	return m, nil
}

// ValidText is s with each byte sequence that is not UTF-8 replaced by
// U+FFFD, the replacement character; s itself when it is UTF-8.
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// HeaderText is an HTTP header's name or value as text: s itself when it
// is UTF-8, otherwise each of its bytes read as the Latin-1 (ISO-8859-1)
// character of that number, as HTTP's obs-text historically is and as
// browsers read header values, so that no byte is lost: a tool that wants
// the bytes back writes each character as one byte.
func HeaderText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	r := make([]rune, len(s))
	for i := range len(s) {
		r[i] = rune(s[i])
	}
	return string(r)
}

// Each message's keys, in the order its encoder writes them: the
// deterministic order, shorter first, then bytewise.
var (
	requestKeys      = []string{"abi", "tool", "input", "call_id", "workspace"}
	responseKeys     = []string{"abi", "error", "output"}
	manifestKeys     = []string{"abi", "tools"}
	toolKeys         = []string{"name", "needs", "mutates", "idempotent", "description", "input_schema"}
	needsKeys        = []string{"env", "net", "clock", "random", "workspace"}
	httpRequestKeys  = []string{"abi", "url", "body", "header", "method"}
	httpResponseKeys = []string{"abi", "body", "error", "header", "status"}
)

func encodeRequest(r Request) []byte {
	b := make([]byte, 0, 48+len(r.Tool)+len(r.CallID)+len(r.Input)+len(r.Workspace))
	b = appendHead(b, majorMap, 5)
	b = appendInt(appendText(b, "abi"), r.ABI)
	b = appendText(appendText(b, "tool"), r.Tool)
	b = appendText(appendText(b, "input"), r.Input)
	b = appendText(appendText(b, "call_id"), r.CallID)
	return appendText(appendText(b, "workspace"), r.Workspace)
}

func (r *Request) read(d *decoder) {
	o := d.object(requestKeys)
	for d.field(&o) {
		switch o.key {
		case 0:
			d.integer(&r.ABI)
		case 1:
			d.text(&r.Tool)
		case 2:
			d.text(&r.Input)
		case 3:
			d.text(&r.CallID)
		case 4:
			d.text(&r.Workspace)
		}
	}
}

func encodeResponse(r Response) []byte {
	b := make([]byte, 0, 32+len(r.Output)+len(r.Error))
	if r.Error == "" { // omitempty
		b = appendHead(b, majorMap, 2)
		b = appendInt(appendText(b, "abi"), r.ABI)
		return appendText(appendText(b, "output"), r.Output)
	}
	b = appendHead(b, majorMap, 3)
	b = appendInt(appendText(b, "abi"), r.ABI)
	b = appendText(appendText(b, "error"), r.Error)
	return appendText(appendText(b, "output"), r.Output)
}

func (r *Response) read(d *decoder) {
	o := d.object(responseKeys)
	for d.field(&o) {
		switch o.key {
		case 0:
			d.integer(&r.ABI)
		case 1:
			d.text(&r.Error)
		case 2:
			d.text(&r.Output)
		}
	}
}

func encodeManifest(m Manifest) []byte {
	b := appendHead(nil, majorMap, 2)
	b = appendInt(appendText(b, "abi"), m.ABI)
	b = appendText(b, "tools")
	if m.Tools == nil {
		return append(b, cborNull)
	}
	b = appendHead(b, majorArray, uint64(len(m.Tools)))
	for _, t := range m.Tools {
		b = t.append(b)
	}
	return b
}

func (m *Manifest) read(d *decoder) {
	o := d.object(manifestKeys)
	for d.field(&o) {
		switch o.key {
		case 0:
			d.integer(&m.ABI)
		case 1:
			m.Tools = nil
			if d.null() {
				continue
			}
			n := d.array()
			if d.err != nil {
				return
			}
			m.Tools = make([]Tool, n)
			for i := range m.Tools {
				m.Tools[i].read(d)
			}
			d.leave()
		}
	}
}

func (t Tool) append(b []byte) []byte {
	b = appendHead(b, majorMap, 6)
	b = appendText(appendText(b, "name"), t.Name)
	b = t.Needs.append(appendText(b, "needs"))
	b = appendBool(appendText(b, "mutates"), t.Mutates)
	b = appendBool(appendText(b, "idempotent"), t.Idempotent)
	b = appendText(appendText(b, "description"), t.Description)
	return appendText(appendText(b, "input_schema"), t.InputSchema)
}

func (t *Tool) read(d *decoder) {
	o := d.object(toolKeys)
	for d.field(&o) {
		switch o.key {
		case 0:
			d.text(&t.Name)
		case 1:
			t.Needs.read(d)
		case 2:
			d.boolean(&t.Mutates)
		case 3:
			d.boolean(&t.Idempotent)
		case 4:
			d.text(&t.Description)
		case 5:
			d.text(&t.InputSchema)
		}
	}
}

func (n Needs) append(b []byte) []byte {
	fields := 1
	for _, present := range []bool{len(n.Env) > 0, len(n.Net) > 0, n.Clock, n.Random} {
		if present {
			fields++
		}
	}
	b = appendHead(b, majorMap, uint64(fields))
	if len(n.Env) > 0 {
		b = appendStrings(appendText(b, "env"), n.Env)
	}
	if len(n.Net) > 0 {
		b = appendStrings(appendText(b, "net"), n.Net)
	}
	if n.Clock {
		b = appendBool(appendText(b, "clock"), true)
	}
	if n.Random {
		b = appendBool(appendText(b, "random"), true)
	}
	return appendText(appendText(b, "workspace"), string(n.Workspace))
}

func (n *Needs) read(d *decoder) {
	o := d.object(needsKeys)
	for d.field(&o) {
		switch o.key {
		case 0:
			d.strings(&n.Env)
		case 1:
			d.strings(&n.Net)
		case 2:
			d.boolean(&n.Clock)
		case 3:
			d.boolean(&n.Random)
		case 4:
			var s string
			d.text(&s)
			n.Workspace = Access(s)
		}
	}
}

func encodeHTTPRequest(r HTTPRequest) []byte {
	fields := 3
	if len(r.Body) > 0 {
		fields++
	}
	if len(r.Header) > 0 {
		fields++
	}
	b := make([]byte, 0, 64+len(r.URL)+len(r.Body))
	b = appendHead(b, majorMap, uint64(fields))
	b = appendInt(appendText(b, "abi"), r.ABI)
	b = appendText(appendText(b, "url"), r.URL)
	if len(r.Body) > 0 {
		b = appendBytes(appendText(b, "body"), r.Body)
	}
	if len(r.Header) > 0 {
		b = appendHeader(appendText(b, "header"), r.Header)
	}
	return appendText(appendText(b, "method"), r.Method)
}

func (r *HTTPRequest) read(d *decoder) {
	o := d.object(httpRequestKeys)
	for d.field(&o) {
		switch o.key {
		case 0:
			d.integer(&r.ABI)
		case 1:
			d.text(&r.URL)
		case 2:
			d.bytes(&r.Body)
		case 3:
			d.header(&r.Header)
		case 4:
			d.text(&r.Method)
		}
	}
}

func encodeHTTPResponse(r HTTPResponse) []byte {
	fields := 1
	for _, present := range []bool{len(r.Body) > 0, r.Error != "", len(r.Header) > 0, r.Status != 0} {
		if present {
			fields++
		}
	}
	b := make([]byte, 0, 64+len(r.Body)+len(r.Error))
	b = appendHead(b, majorMap, uint64(fields))
	b = appendInt(appendText(b, "abi"), r.ABI)
	if len(r.Body) > 0 {
		b = appendBytes(appendText(b, "body"), r.Body)
	}
	if r.Error != "" {
		b = appendText(appendText(b, "error"), r.Error)
	}
	if len(r.Header) > 0 {
		b = appendHeader(appendText(b, "header"), r.Header)
	}
	if r.Status != 0 {
		b = appendInt(appendText(b, "status"), r.Status)
	}
	return b
}

func (r *HTTPResponse) read(d *decoder) {
	o := d.object(httpResponseKeys)
	for d.field(&o) {
		switch o.key {
		case 0:
			d.integer(&r.ABI)
		case 1:
			d.bytes(&r.Body)
		case 2:
			d.text(&r.Error)
		case 3:
			d.header(&r.Header)
		case 4:
			d.integer(&r.Status)
		}
	}
}
