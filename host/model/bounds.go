package model

import "fmt"

// Bounds on a model's answer, so that a server cannot make the host hold
// without end: a line of an event stream is bounded by maxSSELine (sse.go).
const (
	// maxTurn bounds a turn's text and tool-call arguments together. A
	// turn of 16 MiB is some four million tokens, far more than any
	// model's max_tokens allows.
	maxTurn = 16 << 20
	// maxWholeAnswer bounds an answer that was not streamed, a JSON
	// document in which text may take more room than it does as text.
	maxWholeAnswer = 2 * maxTurn
)

// errTurnTooLarge is a turn past maxTurn.
var errTurnTooLarge = fmt.Errorf("%w: the turn's text and tool-call arguments are longer than %d MiB, the most cairn keeps of one turn (a lower max_tokens keeps turns shorter)",
	ErrTooLarge, maxTurn>>20)

// turnSize counts the bytes of a turn's text and arguments.
type turnSize int

// add counts n more bytes.
//
// # Errors
//
// errTurnTooLarge when the turn is past maxTurn.
func (s *turnSize) add(n int) error {
	*s += turnSize(n)
	if *s > maxTurn {
		return errTurnTooLarge
	}
	return nil
}
