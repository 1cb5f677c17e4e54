package pgstore

import "github.com/cairnrun/cairn/checkpoint"

// Pause stops a lease's renewal, as if its holder were stopped or cut off.
func Pause(l checkpoint.Lock) { l.(*lease).stopRenewing() }
