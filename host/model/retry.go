package model

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The default retry policy: 4 retries, waits from about 1 s doubling to at
// most 60 s. Anthropic's rate limits ask for waits of up to a minute.
const (
	defaultRetries = 4
	defaultBackoff = time.Second
	defaultMaxWait = 60 * time.Second
)

// retryPolicy says how often and how long a provider waits between
// attempts. Its zero value makes no retries and does not wait.
type retryPolicy struct {
	retries int           // after the first attempt
	base    time.Duration // the first wait without Retry-After
	maxWait time.Duration // the longest wait; a server that asks for more is not retried
	// sleep waits for d or until ctx ends; nil means sleepCtx.
	sleep func(ctx context.Context, d time.Duration) error
}

func newRetryPolicy(maxRetries int) retryPolicy {
	switch {
	case maxRetries == 0:
		maxRetries = defaultRetries
	case maxRetries < 0:
		maxRetries = 0
	}
	return retryPolicy{retries: maxRetries, base: defaultBackoff, maxWait: defaultMaxWait}
}

// retryableError is a failed attempt that another attempt may mend: a rate
// limit, a server error, a dropped connection or a broken stream. After is
// the wait the server asked for, 0 when it did not.
type retryableError struct {
	err   error
	after time.Duration
}

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

func retryable(err error) error { return &retryableError{err: err} }

// do runs attempt until it succeeds, fails for good, or the retries run
// out. Which provider it is goes into the errors. Before each wait it calls
// onRetry, when not nil, with the number of the attempt that failed, its
// error and the wait.
//
// # Errors
//
// The context's error when ctx ends; ErrUnavailable, with the last failure
// and the number of attempts, when the retries run out or the server asks
// for a wait longer than maxWait; any error of attempt that is not a
// retryableError, as it is.
func (p retryPolicy) do(ctx context.Context, name string, onRetry func(int, error, time.Duration),
	attempt func(context.Context) (Response, error)) (Response, error) {
	for n := 1; ; n++ {
		resp, err := attempt(ctx)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, fmt.Errorf("%s: %w", name, context.Cause(ctx))
		}
		var re *retryableError
		if !errors.As(err, &re) {
			return Response{}, fmt.Errorf("%s: %w", name, err)
		}
		if n > p.retries {
			return Response{}, fmt.Errorf("%w: %s: %v (gave up after %d attempts)", ErrUnavailable, name, err, n)
		}
		if re.after > p.maxWait {
			return Response{}, fmt.Errorf("%w: %s: %v (the server asks to wait %s, longer than %s)",
				ErrUnavailable, name, err, re.after, p.maxWait)
		}
		d := p.delay(n, re.after)
		if onRetry != nil {
			onRetry(n, fmt.Errorf("%s: %w", name, err), d)
		}
		if err := p.wait(ctx, d); err != nil {
			return Response{}, fmt.Errorf("%s: %w", name, err)
		}
	}
}

// delay is the wait before attempt n+1: what the server asked for, or an
// exponential backoff with jitter, between half and all of base·2^(n-1),
// capped at maxWait.
func (p retryPolicy) delay(n int, after time.Duration) time.Duration {
	if after > 0 {
		return after
	}
	d := p.base << min(n-1, 30)
	if d <= 0 || d > p.maxWait {
		d = p.maxWait
	}
	if d < 2 {
		return d
	}
	return d/2 + rand.N(d/2)
}

func (p retryPolicy) wait(ctx context.Context, d time.Duration) error {
	if p.sleep != nil {
		return p.sleep(ctx, d)
	}
	return sleepCtx(ctx, d)
}

// sleepCtx waits for d, or until ctx ends and returns its cause.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// retryAfter is the wait a response asks for: retry-after-ms, or
// Retry-After in seconds or as an HTTP date. It is 0 when there is none,
// or it is not a wait in the future.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms > 0 && ms < 1e9 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e6 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
