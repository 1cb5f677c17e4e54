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
// (or, if nothing else is answered, as a JSON array). The members the
// SDK's methods (sdkMethods) say it would refuse are taken out before it
// sees the batch; one it refuses all the same is taken out by its
// refusal's words, at most maxBatchPasses times, past which, or for a
// refusal that names no member, the whole batch is refused (see
// answerRefusals): a batch of many methods the server does not know is
// so not served once for each.
func serveBatch(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler) {
	raws, msgs, _ := batchMessages(bytes.TrimSpace(body))
	keep, answers := unhandled(msgs)
	for pass := 0; len(keep) > 0; pass++ {
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
		if len(out) == 0 || pass+1 >= maxBatchPasses {
			answerRefusal(w, r, b, bw.status, bw.text.String())
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

// maxBatchPasses is how many times serveBatch hands the SDK a batch.
const maxBatchPasses = 4

// unhandled is which of msgs, a batch's members, the SDK handles (keep,
// their indexes), by sdkMethods, and the answers to the requests among
// the others: -32601 for a method the server does not know, -32600 for a
// notification's method with an id or a request without the params it
// needs; a notification the SDK would refuse is let go.
func unhandled(msgs []jsonrpc.Message) (keep []int, answers []*jsonrpc.Response) {
	for i, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			keep = append(keep, i)
			continue
		}
		kind, known := sdkMethods[req.Method]
		var refused *jsonrpc.Error
		switch {
		case !known:
			refused = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q", req.Method)}
		case kind == notificationMethod && req.ID.IsValid():
			refused = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("invalid request: unexpected id for %q", req.Method)}
		case kind != notificationMethod && !req.ID.IsValid():
			continue // the SDK refuses it, and a notification has no answer
		case kind == needsParams && len(req.Params) == 0:
			refused = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: `invalid request: missing required "params"`}
		default:
			keep = append(keep, i)
			continue
		}
		if req.ID.IsValid() {
			answers = append(answers, &jsonrpc.Response{ID: req.ID, Error: refused})
		}
	}
	return keep, answers
}

// A methodKind is how the SDK takes a method a client sends.
type methodKind int

const (
	needsParams        methodKind = iota // a request the SDK refuses without params
	paramsOptional                       // a request it takes without
	notificationMethod                   // a notification's
)

// sdkMethods are the methods the SDK's server handles (the MCP Go SDK
// v1.8.0's serverMethodInfos), and how it takes each. One it comes to
// handle besides is refused by it in a batch, and serveBatch takes it
// out then.
var sdkMethods = map[string]methodKind{
	"completion/complete": needsParams, "server/discover": paramsOptional, "initialize": needsParams,
	"ping": paramsOptional, "prompts/list": paramsOptional, "prompts/get": needsParams,
	"tools/list": paramsOptional, "tools/call": needsParams, "resources/list": paramsOptional,
	"resources/templates/list": paramsOptional, "resources/read": needsParams, "logging/setLevel": needsParams,
	"resources/subscribe": needsParams, "subscriptions/listen": needsParams, "resources/unsubscribe": needsParams,
	"notifications/cancelled": notificationMethod, "notifications/initialized": notificationMethod,
	"notifications/roots/list_changed": notificationMethod, "notifications/progress": notificationMethod,
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
		case method == "" && (len(req.Params) != 0 || !req.ID.IsValid() || sdkMethods[req.Method] == paramsOptional):
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
