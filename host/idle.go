package host

// idle lets go, in the background, of what the process keeps only to make
// later calls quicker (spare instances, free heap pages; see
// sandbox.Runtime.Trim), as the run starts to wait for a person, who may
// take minutes: an agent at an approval prompt holds little more than its
// state. The first call after costs the making of its instance.
func (r *run) idle() {
	if r.trim != nil {
		go r.trim()
	}
}

// Idle lets go, in the background, of what the engine keeps only to make
// later calls quicker (see sandbox.Runtime.Trim), for a caller about to
// wait for a person between runs: a chat waiting for its next prompt.
// The next run's first call of each tool loads it again.
func (e *Engine) Idle() { go e.rt.Trim() }
