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

// sealFrame fills in the header of frame, a frame of type t whose payload
// was appended after room for its header: the bytes appendFrame makes.
func sealFrame(frame []byte, t RecordType) {
	payload := frame[frameHeader:]
	binary.LittleEndian.PutUint32(frame[0:4], uint32(len(payload)))
	frame[4] = byte(t)
	crc := crc32.Update(crc32.Checksum(frame[:5], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(frame[5:9], crc)
}

// frame is one frame found in a file.
type frame struct {
	off     int64
	typ     RecordType
	payload []byte
}

// frameAt reads the frame at off, if there is a valid one: readFrame
// without the reason, for the scans that try every offset of damaged
// bytes, which would otherwise format a reason at each of them.
func frameAt(data []byte, off int64) (frame, int64, bool) {
	rest := data[off:]
	if len(rest) < frameHeader {
		return frame{}, 0, false
	}
	n := binary.LittleEndian.Uint32(rest[0:4])
	if n == 0 || n > maxRecordSize || uint64(len(rest)) < frameHeader+uint64(n) {
		return frame{}, 0, false
	}
	payload := rest[frameHeader : frameHeader+n]
	if crc32.Update(crc32.Checksum(rest[:5], castagnoli), castagnoli, payload) != binary.LittleEndian.Uint32(rest[5:9]) {
		return frame{}, 0, false
	}
	return frame{off: off, typ: RecordType(rest[4]), payload: payload}, off + frameHeader + int64(n), true
}

// readFrame reads the frame at off, or says why there is none.
func readFrame(data []byte, off int64) (frame, int64, string) {
	if f, next, ok := frameAt(data, off); ok {
		return f, next, ""
	}
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
	return frame{}, 0, "frame checksum mismatch"
}

// frames splits a file into frames. It returns the valid frames and the
// offset where they end. Damage with no valid frame after it is a torn tail:
// the frames before it are returned and end marks where it starts. Damage
// with a valid frame after it is a *CorruptError.
func frames(name string, data []byte) ([]frame, int64, error) {
	return framesOf(name, data, anyFrame)
}

// anyFrame counts a frame of any type.
func anyFrame(RecordType) bool { return true }

// framesOf is frames for a file whose frames are of the types counts
// accepts: only such a frame after damage makes the damage corruption.
func framesOf(name string, data []byte, counts func(RecordType) bool) ([]frame, int64, error) {
	out, end, why := split(data)
	if why != "" && !allZero(data[end:]) && validFrameAfter(data, end+1, counts) {
		return nil, 0, &CorruptError{File: name, Offset: end, Reason: why}
	}
	return out, end, nil
}

// split reads the frames at the start of data up to the first damage. It
// returns them, the offset where they end, and why the bytes there are no
// frame ("" when data ends there).
func split(data []byte) ([]frame, int64, string) {
	var out []frame
	off := int64(0)
	for off < int64(len(data)) {
		f, next, why := readFrame(data, off)
		if why != "" {
			return out, off, why
		}
		out = append(out, f)
		off = next
	}
	return out, off, ""
}

// journalFrames splits a journal into frames as frames does, except that
// damage with valid frames after it is a torn tail too when it lies past
// what is known to be durable. Appends that were not synced yet (a round
// of reads, or any append the next sync has not reached) are written
// back by the kernel a page at a time in any order, so a power cut may
// keep a later page of them and lose an earlier one. What is known to be
// durable is the header, the first durable bytes (the commit mark's
// length), and everything before a Commit or Abort that has a valid frame
// after it: a round's commit is synced before anything of the next is
// written. Damage there is a *CorruptError. dropped reports that valid
// frames past end are dropped with the tail.
func journalFrames(name string, data []byte, durable int64) (fr []frame, end int64, dropped bool, err error) {
	fr, end, why := split(data)
	if why == "" || allZero(data[end:]) || !validFrameAfter(data, end+1, anyFrame) {
		return fr, end, false, nil
	}
	switch c, committed := committedAfter(data, end+1); {
	case end == 0:
		why += ", in the header, which is synced when the journal is made"
	case end < durable:
		why = fmt.Sprintf("%s, within the first %d bytes, which the commit mark says were durable", why, durable)
	case committed:
		why = fmt.Sprintf("%s, before the commit at offset %d, which was durable since a record follows it", why, c)
	default:
		return fr, end, true, nil
	}
	return nil, 0, false, &CorruptError{File: name, Offset: end, Reason: why}
}

// unsyncedFrames splits a file that is never synced (the past file) into
// frames. Nothing in it is known to be durable: any page of it may be
// written back, or not, in any order, so any damage is a torn tail,
// valid frames after it and all. It returns the frames before the first
// damage and the offset where they end.
func unsyncedFrames(data []byte) ([]frame, int64) {
	fr, end, _ := split(data)
	return fr, end
}

// framesFrom calls fn with each valid frame that starts at any offset
// from start on, in order of offset, until fn returns false. Damaged
// bytes may hide a frame at any offset, so every one is tried, but a run
// of zeros, as a journal's reserved space is, is passed over a word at a
// time: an offset whose length field is zero holds no frame.
func framesFrom(data []byte, start int64, fn func(f frame, next int64) bool) {
	for off := start; off+frameHeader < int64(len(data)); off++ {
		if binary.LittleEndian.Uint32(data[off:]) == 0 {
			off = lastZeroLength(data, off)
			continue
		}
		if f, next, ok := frameAt(data, off); ok && !fn(f, next) {
			return
		}
	}
}

// lastZeroLength is, of the offsets from off on whose four bytes are all
// zero (off is one), the last before a byte that is not.
func lastZeroLength(data []byte, off int64) int64 {
	i := off + 4
	for i+8 <= int64(len(data)) && binary.LittleEndian.Uint64(data[i:]) == 0 {
		i += 8
	}
	for i < int64(len(data)) && data[i] == 0 {
		i++
	}
	return i - 4
}

// committedAfter finds, from start on, a Commit or Abort frame with a
// valid frame right after it, and returns its offset.
func committedAfter(data []byte, start int64) (at int64, found bool) {
	framesFrom(data, start, func(f frame, next int64) bool {
		if f.typ != RecCommit && f.typ != RecAbort {
			return true
		}
		if _, _, ok := frameAt(data, next); ok {
			at, found = f.off, true
		}
		return !found
	})
	return at, found
}

// validFrameAfter reports whether any offset from start holds a frame of a
// type counts accepts, with a valid checksum.
func validFrameAfter(data []byte, start int64, counts func(RecordType) bool) (found bool) {
	framesFrom(data, start, func(f frame, _ int64) bool {
		found = counts(f.typ)
		return !found
	})
	return found
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
