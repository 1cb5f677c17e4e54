package checkpoint

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

const frameHeader = 9

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendFrame appends one frame holding payload to b.
func appendFrame(b []byte, t RecordType, payload []byte) []byte {
	var h [frameHeader]byte
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(payload)))
	h[4] = byte(t)
	crc := crc32.Update(crc32.Checksum(h[:5], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(h[5:9], crc)
	b = append(b, h[:]...)
	return append(b, payload...)
}

// frame is one frame found in a file.
type frame struct {
	off     int64
	typ     RecordType
	payload []byte
}

// readFrame reads the frame at off, or says why there is none.
func readFrame(data []byte, off int64) (frame, int64, string) {
	rest := data[off:]
	if len(rest) < frameHeader {
		return frame{}, 0, "frame header cut short"
	}
	n := binary.LittleEndian.Uint32(rest[0:4])
	if n == 0 || n > maxRecordSize {
		return frame{}, 0, fmt.Sprintf("frame length %d out of range", n)
	}
	if uint64(len(rest)) < frameHeader+uint64(n) {
		return frame{}, 0, "frame payload cut short"
	}
	payload := rest[frameHeader : frameHeader+n]
	crc := crc32.Update(crc32.Checksum(rest[:5], castagnoli), castagnoli, payload)
	if crc != binary.LittleEndian.Uint32(rest[5:9]) {
		return frame{}, 0, "frame checksum mismatch"
	}
	return frame{off: off, typ: RecordType(rest[4]), payload: payload}, off + frameHeader + int64(n), ""
}

// frames splits a file into frames. It returns the valid frames and the
// offset where they end. Damage with no valid frame after it is a torn tail:
// the frames before it are returned and end marks where it starts. Damage
// with a valid frame after it is a *CorruptError.
func frames(name string, data []byte) ([]frame, int64, error) {
	return framesOf(name, data, func(RecordType) bool { return true })
}

// framesOf is frames for a file whose frames are of the types counts
// accepts: only such a frame after damage makes the damage corruption.
func framesOf(name string, data []byte, counts func(RecordType) bool) ([]frame, int64, error) {
	var out []frame
	off := int64(0)
	for off < int64(len(data)) {
		f, next, why := readFrame(data, off)
		if why != "" {
			if !allZero(data[off:]) && validFrameAfter(data, off+1, counts) {
				return nil, 0, &CorruptError{File: name, Offset: off, Reason: why}
			}
			return out, off, nil
		}
		out = append(out, f)
		off = next
	}
	return out, off, nil
}

// validFrameAfter reports whether any offset from start holds a frame of a
// type counts accepts, with a valid checksum.
func validFrameAfter(data []byte, start int64, counts func(RecordType) bool) bool {
	for off := start; off+frameHeader < int64(len(data)); off++ {
		if f, _, why := readFrame(data, off); why == "" && counts(f.typ) {
			return true
		}
	}
	return false
}

// allZero reports whether b holds only zeros, as the reserved tail of a
// journal does.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
