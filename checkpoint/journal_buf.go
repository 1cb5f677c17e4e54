package checkpoint

import (
	"bytes"
	"errors"

	"github.com/fxamacker/cbor/v2"
)

// bufEncMode is encMode, encoding into a buffer of the caller's.
var bufEncMode = encMode.(cbor.UserBufferEncMode)

// appendRecordFrame appends rec's frame to b, its payload encoded in place
// after the header: the bytes of appendFrame(b, rec.Type, payload) with
// encodeRecord's payload, without making the payload apart and copying it.
// On an error b is as it was.
func appendRecordFrame(b *bytes.Buffer, rec Record) error {
	if rec.Type == RecState {
		return errors.New("a state is written with encodeState")
	}
	return appendEncodedFrame(b, rec.Type, rec)
}

// appendEncodedFrame appends to b a frame of type t whose payload is v
// encoded with encMode, in place after the header. On an error b is as it
// was.
func appendEncodedFrame(b *bytes.Buffer, t RecordType, v any) error {
	start := b.Len()
	var h [frameHeader]byte
	b.Write(h[:])
	if err := bufEncMode.MarshalToBuffer(v, b); err != nil {
		b.Truncate(start)
		return err
	}
	sealFrame(b.Bytes()[start:], t)
	return nil
}

// appendEntryFrame appends e's frame in a group log to b: the bytes of
// appendFrame(b, recGroupEntry, e.encode()), the payload encoded in place.
func appendEntryFrame(b []byte, e groupEntry) []byte {
	start := len(b)
	b = append(b, make([]byte, frameHeader)...)
	b = e.appendTo(b)
	sealFrame(b[start:], recGroupEntry)
	return b
}

// maxKeptBuffer bounds the buffer a journal keeps between appends: one
// larger (an append of a large result) is let go.
const maxKeptBuffer = 1 << 20

// keepBuffer keeps the append buffer for the next append, unless it grew
// past maxKeptBuffer.
func (l *journalLog) keepBuffer() {
	if l.wbuf.Cap() > maxKeptBuffer {
		l.wbuf = bytes.Buffer{}
	}
	if cap(l.entry) > maxKeptBuffer {
		l.entry = nil
	}
}
