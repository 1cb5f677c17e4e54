package model

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"
)

// defaultTimeout bounds a server's silence when Spec.Timeout does not. A
// reasoning model may think for a minute or more before its first byte,
// and a local server may first have to load the model.
const defaultTimeout = 2 * time.Minute

// timeoutError is a server that kept silent longer than its bound, before
// its answer began or in the middle of it, or that sent only keep-alive
// comments for that long.
type timeoutError struct {
	d         time.Duration
	started   bool
	keepAlive bool // the server sent comments meanwhile, and nothing else
}

func (e *timeoutError) Error() string {
	if e.keepAlive {
		return fmt.Sprintf("the server sent only keep-alive comments for %s, nothing of its answer (model.timeout sets this bound)", seconds(e.d))
	}
	if e.started {
		return fmt.Sprintf("the server sent nothing for %s in the middle of its answer (model.timeout sets this bound)", seconds(e.d))
	}
	return fmt.Sprintf("the server did not answer within %s (model.timeout sets this bound)", seconds(e.d))
}

// seconds writes d as "120 s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// watchdog ends an attempt whose server keeps silent. It cancels the
// attempt's context, with a retryable *timeoutError as the cause, when the
// response headers take longer than their bound, or, once they came, when
// a read of the body waits longer than the idle bound. Cancelling the
// context aborts the request and any read of its body at once.
type watchdog struct {
	cancel context.CancelCauseFunc
	timer  *time.Timer
	idle   time.Duration
}

// watch starts the watchdog of one attempt with its bounds on the wait for
// the headers and on each read of the body. The attempt uses the context
// it returns and calls stop when it is over.
func watch(ctx context.Context, headers, idle time.Duration) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{cancel: cancel, idle: idle}
	w.timer = time.AfterFunc(headers, func() { cancel(retryable(&timeoutError{d: headers})) })
	return ctx, w
}

// body is the response body r with each read bounded by the idle bound.
// The headers' bound ends here; when it ran out meanwhile, the context is
// done already and reads of r fail.
func (w *watchdog) body(r io.Reader) io.Reader {
	if !w.timer.Stop() {
		return r
	}
	idle := w.idle
	w.timer = time.AfterFunc(idle, func() { w.cancel(retryable(&timeoutError{d: idle, started: true})) })
	w.timer.Stop()
	return &idleReader{r: r, timer: w.timer, d: idle}
}

func (w *watchdog) stop() {
	w.timer.Stop()
	w.cancel(nil)
}

// idleReader runs its timer while a read waits: only the server's silence
// counts, not the time the decoder and OnText take between reads.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	r.timer.Reset(r.d)
	n, err := r.r.Read(p)
	r.timer.Stop()
	return n, err
}
