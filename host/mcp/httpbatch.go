package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// serveBatch serves a POST's batch, body, in a session that takes
// batches, with next, the SDK, answering each of its members on its own,
// as JSON-RPC asks and stdio does: the SDK refuses a whole batch, with a
// plain-text 400, at the first member it does not handle (a method it
// does not know, a notification's method sent with an id, a request
// without the params it needs), before it runs any. Each such member is
// taken out and answered with its own error (-32601 or -32600, naming its
// id; a notification, which has no answer, is let go), and the rest is
// served by the SDK, the errors sent as events of its answer's stream
// (or, if nothing else is answered, as a JSON array). A refusal that
// names no member is the whole batch's (see answerRefusals).
func serveBatch(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler) {
	raws, msgs, _ := batchMessages(bytes.TrimSpace(body))
	var answers []*jsonrpc.Response
	keep := make([]int, len(raws))
	for i := range keep {
		keep[i] = i
	}
	for len(keep) > 0 {
		sub := make([]json.RawMessage, len(keep))
		for j, i := range keep {
			sub[j] = raws[i]
		}
		b, _ := json.Marshal(sub)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		bw := &batchWriter{refusalWriter: refusalWriter{ResponseWriter: w}, answers: answers}
		next.ServeHTTP(bw, r)
		if !bw.held {
			return
		}
		out, refused := batchCulprits(strings.TrimSpace(bw.text.String()), msgs, keep)
		if len(out) == 0 {
			answerRefusal(w, b, bw.text.String())
			return
		}
		keep = slices.DeleteFunc(keep, func(i int) bool { return slices.Contains(out, i) })
		answers = append(answers, refused...)
	}
	if len(answers) == 0 {
		w.WriteHeader(http.StatusAccepted) // notifications alone, let go
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(encodeAll(answers))
}

// encodeAll is answers as a JSON array.
func encodeAll(answers []*jsonrpc.Response) []byte {
	all := make([]json.RawMessage, len(answers))
	for i, a := range answers {
		all[i], _ = jsonrpc.EncodeMessage(a)
	}
	b, _ := json.Marshal(all)
	return b
}

// batchCulprits is the members of msgs, of those at keep, that the SDK's
// refusal, text, is about, and the answers to those of them that are
// requests; none when text names none.
func batchCulprits(text string, msgs []jsonrpc.Message, keep []int) (out []int, answers []*jsonrpc.Response) {
	code, method, message := int64(jsonrpc.CodeInvalidRequest), "", ""
	withID := func(*jsonrpc.Request) bool { return true } // the members of method it is about
	switch {
	case strings.HasPrefix(text, notHandled):
		method = quotedIn(text)
		code, message = jsonrpc.CodeMethodNotFound, fmt.Sprintf("method not found: %q", method)
	case strings.Contains(text, "unexpected id for "):
		method = quotedIn(text)
		message = fmt.Sprintf("invalid request: unexpected id for %q", method)
		withID = func(r *jsonrpc.Request) bool { return r.ID.IsValid() }
	case strings.Contains(text, "missing id for "):
		method = quotedIn(text)
		withID = func(r *jsonrpc.Request) bool { return !r.ID.IsValid() }
	case strings.Contains(text, `missing required "params"`):
		message = `invalid request: missing required "params"`
	default:
		return nil, nil
	}
	for _, i := range keep {
		req, ok := msgs[i].(*jsonrpc.Request)
		switch {
		case !ok:
			continue
		case method != "" && (req.Method != method || !withID(req)):
			continue
		case method == "" && (len(req.Params) != 0 || !req.ID.IsValid() || paramsOptional[req.Method]):
			continue
		}
		out = append(out, i)
		if req.ID.IsValid() {
			answers = append(answers, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: code, Message: message}})
		}
		if method == "" {
			break // the SDK stops at the first
		}
	}
	return out, answers
}

// paramsOptional are the requests the SDK takes without params.
var paramsOptional = map[string]bool{"ping": true, "tools/list": true, "prompts/list": true,
	"resources/list": true, "resources/templates/list": true, "server/discover": true}

// quotedIn is the first Go-quoted string in text; "" for none.
func quotedIn(text string) string {
	i := strings.IndexByte(text, '"')
	if i < 0 {
		return ""
	}
	q, err := strconv.QuotedPrefix(text[i:])
	if err != nil {
		return ""
	}
	s, _ := strconv.Unquote(q)
	return s
}

// A batchWriter is a refusalWriter that sends answers, the errors of
// members taken out of a batch, as the first events of the SDK's answer
// (a stream of events), or, when the SDK answers 202 (it had only
// notifications left), as a JSON array with status 200.
type batchWriter struct {
	refusalWriter
	answers []*jsonrpc.Response
}

func (w *batchWriter) WriteHeader(code int) {
	switch h := w.Header(); {
	case len(w.answers) == 0:
	case code == http.StatusAccepted:
		h.Set("Content-Type", "application/json")
		w.ResponseWriter.WriteHeader(http.StatusOK)
		w.ResponseWriter.Write(encodeAll(w.answers))
		w.answers = nil
		return
	case code == http.StatusOK && baseMediaType(h.Get("Content-Type")) == "text/event-stream":
		w.ResponseWriter.WriteHeader(code)
		for _, a := range w.answers {
			b, _ := jsonrpc.EncodeMessage(a)
			fmt.Fprintf(w.ResponseWriter, "event: message\ndata: %s\n\n", b)
		}
		w.answers = nil
		return
	}
	w.refusalWriter.WriteHeader(code)
}

func (w *batchWriter) Write(p []byte) (int, error) {
	if !w.held && len(w.answers) > 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.refusalWriter.Write(p)
}
