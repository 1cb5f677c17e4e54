package pgstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a process refused a lease another holds was told the lease
// "expires unless renewed", never when: whether to wait or steal could
// not be judged. The refusal now carries the lease's expiry and says it.
func TestLockedErrorSaysWhenTheLeaseExpires(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	a, b := open(t, url), open(t, url)
	l, err := a.Lock("a1", checkpoint.ThisProcess("holder"))
	must(t, err)
	defer l.Unlock()
	_, err = b.Lock("a1", checkpoint.ThisProcess("other"))
	var le *checkpoint.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second lock: %v, want a LockedError", err)
	}
	now := time.Now()
	if le.Expires.Before(now) || le.Expires.After(now.Add(time.Hour)) {
		t.Fatalf("the lease expires at %v, want after now (%v) and within the lease's time", le.Expires, now)
	}
	if want := "expires at " + le.Expires.Local().Format(time.RFC3339); !strings.Contains(err.Error(), want) {
		t.Fatalf("the refusal %q does not say %q", err, want)
	}
}
