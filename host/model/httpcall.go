package model

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// endpoint is what a provider over HTTP holds: its spec, the URL it
// posts to, the key, the client, how it retries, and how long the server
// may keep silent before the headers of its answer (wait) and in the
// middle of it (idle).
type endpoint struct {
	spec   Spec
	url    string
	key    string
	keyEnv string // the variable the key was read from
	client *http.Client
	retry  retryPolicy
	wait   time.Duration
	idle   time.Duration
}

// newEndpoint reads the base URL (Spec.BaseURL, else the variable
// baseEnv, else defaultBase) and the key (in the variable Spec.APIKeyEnv
// names, else keyEnv) from spec and the environment, now.
func newEndpoint(spec Spec, baseEnv, defaultBase, path, keyEnv string) endpoint {
	base := cmp.Or(spec.BaseURL, os.Getenv(baseEnv), defaultBase)
	timeout := defaultTimeout
	if spec.Timeout > 0 {
		timeout = spec.Timeout
	}
	keyEnv = cmp.Or(spec.APIKeyEnv, keyEnv)
	return endpoint{
		spec:   spec,
		url:    strings.TrimRight(base, "/") + path,
		key:    os.Getenv(keyEnv),
		keyEnv: keyEnv,
		client: &http.Client{},
		retry:  newRetryPolicy(spec.MaxRetries),
		wait:   timeout,
		idle:   timeout,
	}
}

// decoder reads a provider's answer: stream an event stream, whole a
// complete JSON answer, which a server that ignores "stream": true sends.
// Both pass the text to their func as it comes.
type decoder struct {
	stream func(io.Reader, func(string)) (Response, error)
	whole  func(io.Reader, func(string)) (Response, error)
}

// complete posts body with hdr and decodes the answer with dec, passing
// text to req.OnText as it comes, retrying as the package doc says and
// telling req.OnRetry of each retry; name prefixes its errors, and the key
// is masked in them. The turn's cost is the spec's price of its usage.
func (e endpoint) complete(ctx context.Context, name string, hdr http.Header, body []byte, dec decoder, req Request) (Response, error) {
	return e.retry.do(ctx, name, req.OnRetry, func(ctx context.Context) (Response, error) {
		turn, err := e.attempt(ctx, hdr, body, dec, req.OnText)
		if err != nil {
			return Response{}, maskKey(err, e.key)
		}
		turn.Usage.CostMicroUSD = e.spec.Price.Cost(turn.Usage)
		return turn, nil
	})
}

// attempt sends the request once and decodes its answer, within the
// endpoint's bounds on the server's silence.
func (e endpoint) attempt(ctx context.Context, hdr http.Header, body []byte, dec decoder, onText func(string)) (Response, error) {
	ctx, w := watch(ctx, e.wait, e.idle)
	defer w.stop()
	resp, err := post(ctx, e.client, e.url, hdr, body)
	if err != nil {
		return Response{}, e.advise(err)
	}
	defer resp.Body.Close()
	decode := dec.stream
	if isJSON(resp.Header) {
		decode = dec.whole
	}
	turn, err := decode(w.body(resp.Body), onText)
	if err != nil {
		return Response{}, streamFailure(ctx, err)
	}
	return turn, nil
}

// isJSON says whether an answer is one JSON document, not an event stream.
func isJSON(h http.Header) bool {
	t, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && (t == "application/json" || strings.HasSuffix(t, "+json"))
}

// readWhole reads a non-streamed answer, up to maxWholeAnswer.
//
// # Errors
//
// ErrTooLarge for a longer answer; the reader's errors.
func readWhole(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxWholeAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	if len(b) > maxWholeAnswer {
		return nil, fmt.Errorf("%w: the answer, not streamed, is longer than %d MiB, the most cairn reads", ErrTooLarge, maxWholeAnswer>>20)
	}
	return b, nil
}

// post sends a streaming request and returns the response when the server
// accepted it (2xx). The caller closes its body.
//
// # Errors
//
// The context's cause (a retryable timeoutError when the watchdog of the
// attempt ended it); a retryableError for a connection that fails and for
// 408, 409, 429 and 5xx responses (with the wait the server asks for); an
// error wrapping ErrRequest, with the server's message, for other statuses.
func post(ctx context.Context, client *http.Client, url string, hdr http.Header, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRequest, err)
	}
	req.Header = hdr.Clone()
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, retryable(fmt.Errorf("connect: %w", err))
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	err = &statusError{code: resp.StatusCode, msg: serverMessage(b)}
	if retryableStatus(resp.StatusCode) {
		return nil, &retryableError{err: err, after: retryAfter(resp.Header, time.Now())}
	}
	return nil, fmt.Errorf("%w: %w", ErrRequest, err)
}

// A statusError is a response's status that refused the request, with
// the server's message.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.msg) }

// advise adds to a refusal what a user can do about it: the key for 401
// and 403 (the variable it is read from, and whether that is set), the
// address and model name for 404.
func (e endpoint) advise(err error) error {
	var s *statusError
	if !errors.As(err, &s) {
		return err
	}
	switch {
	case (s.code == http.StatusUnauthorized || s.code == http.StatusForbidden) && e.key == "":
		return fmt.Errorf("%w; no key was sent: %s is not set (set it to the API key, or name another variable in the agent file's model.api_key_env)", err, e.keyEnv)
	case s.code == http.StatusUnauthorized || s.code == http.StatusForbidden:
		return fmt.Errorf("%w; the key sent is the value of %s: check that it is a valid key for %s", err, e.keyEnv, e.url)
	case s.code == http.StatusNotFound:
		return fmt.Errorf("%w; check the agent file's model.base_url (requests go to %s) and model.name (%q)", err, e.url, e.spec.Name)
	}
	return err
}

// retryableStatus says whether a status may clear up by itself: timeouts,
// conflicts, rate limits and server errors (Anthropic's 529, overloaded,
// among them).
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict ||
		code == http.StatusTooManyRequests || code >= 500
}

// serverMessage is the message of an error body: error.message in both
// providers' format, or else an excerpt of the body.
func serverMessage(body []byte) string {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		if e.Error.Type != "" {
			return e.Error.Type + ": " + e.Error.Message
		}
		return e.Error.Message
	}
	return excerpt(body)
}

// excerpt is the start of b as one line of valid UTF-8.
func excerpt(b []byte) string {
	const n = 300
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "?")), " ")
	if len(s) <= n {
		if s == "" {
			return "(empty body)"
		}
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// streamFailure turns an error met while reading a stream into what the
// retry loop needs: the context's error when it ended (a retryable
// timeoutError when the watchdog ended it), a refusal or an answer too
// large as it is, and anything else (a cut, a reset, a garbled chunk) as
// retryable.
func streamFailure(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(err, ErrRequest), errors.Is(err, ErrTooLarge):
		return err
	}
	var re *retryableError
	if errors.As(err, &re) {
		return err
	}
	return retryable(fmt.Errorf("stream: %w", err))
}
