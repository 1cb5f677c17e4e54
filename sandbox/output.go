package sandbox

import (
	"bytes"
	"io"
)

// capped keeps what is written to it up to a limit, passes it on to w when
// w is set, and drops the rest, remembering that it did.
type capped struct {
	w         io.Writer
	buf       bytes.Buffer
	limit     int64
	n         int64
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.limit - c.n
	if int64(len(p)) > room {
		c.truncated = true
	}
	keep := p
	if int64(len(keep)) > room {
		keep = keep[:max(room, 0)]
	}
	c.n += int64(len(keep))
	if c.w != nil {
		if _, err := c.w.Write(keep); err != nil {
			return 0, err
		}
	} else {
		c.buf.Write(keep)
	}
	// Claim the whole write, so the guest does not retry into the cap.
	return len(p), nil
}
