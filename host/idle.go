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
