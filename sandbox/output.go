package sandbox

import (
	"bytes"
	"io"
)

// capped keeps what is written to it up to a limit, passes it on to w when
// w is set, and drops the rest, remembering that it did. Once stop is
// closed (the call must stop) it takes no more writes (errStopped, EIO to
// the guest): wazero writes each iovec of an fd_write with a write of its
// own, in the host, where no stop check runs, and a guest may pass
// hundreds of millions.
type capped struct {
	w         io.Writer
	buf       bytes.Buffer
	limit     int64
	n         int64
	truncated bool
	stop      <-chan struct{}
}

func (c *capped) Write(p []byte) (int, error) {
	select {
	case <-c.stop:
		return 0, errStopped
	default:
	}
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
