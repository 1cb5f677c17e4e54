package model

import (
	"errors"
	"strings"
)

// masked stands for a key in the text of an error.
const masked = "[key masked]"

// minSecret is the shortest key that is masked: masking a shorter one
// would garble the words of the message it appears in.
const minSecret = 4

// maskKey returns err with every occurrence of key in its text masked,
// for a server may echo the key it was sent ("Incorrect API key provided:
// sk-…") and the text goes into the journal, the events and `cairn show`.
// The error it returns answers errors.Is as err does and is retryable
// when err is, but does not unwrap to err, whose text still holds the key.
func maskKey(err error, key string) error {
	if err == nil || len(key) < minSecret || !strings.Contains(err.Error(), key) {
		return err
	}
	m := &maskedError{msg: strings.ReplaceAll(err.Error(), key, masked), err: err}
	if re := (*retryableError)(nil); errors.As(err, &re) {
		return &retryableError{err: m, after: re.after}
	}
	return m
}

// maskedError is an error whose text had a key masked.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string        { return e.msg }
func (e *maskedError) Is(target error) bool { return errors.Is(e.err, target) }
