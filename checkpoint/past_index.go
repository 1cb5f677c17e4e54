package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// pastIndexFile is beside pastFile: an entry for every pastIndexEvery-th
// round's past, naming where its frame starts. The newest past is then
// found among the frames from the last entry's to the end of pastFile,
// not from its start, so that resuming an agent of many rounds decodes a
// few of its pasts, not all of them.
//
// Each entry is pastIndexEntry bytes, little-endian: the frame's offset in
// pastFile (8), the past's round (8), the frame's checksum as its header
// holds it (4), and the CRC-32C of the 20 bytes before it (4). Like
// pastFile it is never synced. An entry is trusted only when it names one
// of the frames of pastFile before its first damage, with the checksum
// the entry recorded: an index that lags (a crash between the two writes,
// an entry that could not be written, or a cairn that kept none), a torn
// entry, or one that names a frame since cut away or past the damage a
// power cut left costs decoding more pasts, never a wrong past. With no
// entry to trust, every past is decoded.
const (
	pastIndexFile  = "past-index"
	pastIndexEvery = 32
	pastIndexEntry = 24
	// pastIndexLook is how many entries, from the last, are tried.
	pastIndexLook = 64
)

// pastIndex is one entry of pastIndexFile.
type pastIndex struct {
	off   int64
	round int64
	crc   uint32 // the frame's checksum
}

func (e pastIndex) encode() []byte {
	b := make([]byte, pastIndexEntry)
	binary.LittleEndian.PutUint64(b[0:8], uint64(e.off))
	binary.LittleEndian.PutUint64(b[8:16], uint64(e.round))
	binary.LittleEndian.PutUint32(b[16:20], e.crc)
	binary.LittleEndian.PutUint32(b[20:24], crc32.Checksum(b[:20], castagnoli))
	return b
}

// decodePastIndex decodes one entry; false when its checksum is wrong.
func decodePastIndex(b []byte) (pastIndex, bool) {
	if crc32.Checksum(b[:20], castagnoli) != binary.LittleEndian.Uint32(b[20:24]) {
		return pastIndex{}, false
	}
	return pastIndex{off: int64(binary.LittleEndian.Uint64(b[0:8])), round: int64(binary.LittleEndian.Uint64(b[8:16])),
		crc: binary.LittleEndian.Uint32(b[16:20])}, true
}

// indexPast adds an entry for the frame at off to the index beside the
// past file name. An entry torn by a crash is written over.
func indexPast(name string, off int64, round int, frame []byte) error {
	f, err := os.OpenFile(indexOf(name), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil {
		at := fi.Size() - fi.Size()%pastIndexEntry
		e := pastIndex{off: off, round: int64(round), crc: binary.LittleEndian.Uint32(frame[5:9])}
		_, err = f.WriteAt(e.encode(), at)
	}
	return errors.Join(err, f.Close())
}

// indexOf is the index file beside the past file name.
func indexOf(name string) string { return filepath.Join(filepath.Dir(name), pastIndexFile) }

// pastTail is the end of a past file: its frames from the newest one the
// index names that is still there (or from the start), where they start
// and where they end, and the file's size.
type pastTail struct {
	frames     []frame // offsets from the start of the file
	start, end int64
	size       int64
}

// readPastTail reads the past file name up to its first damage, which
// starts its torn tail (unsyncedFrames), and keeps its frames from the one
// its index's last trustworthy entry names: one of those frames, with the
// checksum the entry recorded. With no such entry it keeps them all. A
// file that does not exist has an empty tail.
//
// The whole file is read, and each frame's checksum checked, but only the
// kept frames are decoded: the file is never synced, so a power cut may
// have lost a page of it long before the frame an entry names and kept
// that frame, and the pasts after such damage are not the agent's.
func readPastTail(name string) (pastTail, error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return pastTail{}, nil
	}
	if err != nil {
		return pastTail{}, err
	}
	fs, end := unsyncedFrames(data)
	t := pastTail{frames: fs, end: end, size: int64(len(data))}
	for _, e := range pastIndexes(indexOf(name)) {
		if i, ok := indexed(data, fs, e); ok {
			t.frames, t.start = fs[i:], e.off
			break
		}
	}
	return t, nil
}

// indexed finds the frame e names among fs, the frames of data: a past
// at e.off whose checksum is the one e recorded.
func indexed(data []byte, fs []frame, e pastIndex) (int, bool) {
	i := sort.Search(len(fs), func(i int) bool { return fs[i].off >= e.off })
	if i == len(fs) || fs[i].off != e.off || fs[i].typ != pastFrame ||
		binary.LittleEndian.Uint32(data[e.off+5:e.off+9]) != e.crc {
		return 0, false
	}
	return i, true
}

// readCutTail is readPastTail for a past file whose torn tail this store
// has cut away since it took the agent's lock, and which only it has
// written since: every byte of it is a whole frame, so it is read from the
// frame of its index's last entry that is still there, not whole.
func readCutTail(name string) (pastTail, error) {
	f, err := os.Open(name)
	if err != nil {
		return readPastTail(name)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return pastTail{}, err
	}
	for _, e := range pastIndexes(indexOf(name)) {
		if e.off <= 0 || e.off+frameHeader > fi.Size() {
			continue
		}
		data := make([]byte, fi.Size()-e.off)
		if _, err := f.ReadAt(data, e.off); err != nil && !errors.Is(err, io.EOF) {
			return pastTail{}, err
		}
		fs, end := unsyncedFrames(data)
		if _, ok := indexed(data, fs, pastIndex{off: 0, crc: e.crc}); !ok {
			continue
		}
		for i := range fs {
			fs[i].off += e.off
		}
		return pastTail{frames: fs, start: e.off, end: e.off + end, size: fi.Size()}, nil
	}
	return readPastTail(name)
}

// pastIndexes are the last entries of the index file name whose checksums
// hold, the newest first; none when it cannot be read.
func pastIndexes(name string) []pastIndex {
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	n := fi.Size() / pastIndexEntry
	first := max(0, n-pastIndexLook)
	data := make([]byte, (n-first)*pastIndexEntry)
	if _, err := f.ReadAt(data, first*pastIndexEntry); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	var out []pastIndex
	for i := len(data) - pastIndexEntry; i >= 0; i -= pastIndexEntry {
		if e, ok := decodePastIndex(data[i : i+pastIndexEntry]); ok {
			out = append(out, e)
		}
	}
	return out
}

// NewestPast reads the past of the agent's highest round from the end of
// agents/<id>/past: from the frame of the last entry of its index that is
// still there, or, with none, from the start. The torn tail a power cut
// leaves, from the file's first damage on, is left out (readPastTail), so
// that the newest past is the last of Pasts. When this store holds the
// agent's lock, the tail is cut away first, as the next PutPast would,
// so that the file is read whole once while the lock is held.
func (s *FileStore) NewestPast(id string) (Past, bool, error) {
	dir, err := s.agentDir(id)
	if err != nil {
		return Past{}, false, err
	}
	name := filepath.Join(dir, pastFile)
	read := readPastTail
	if s.holds(id) {
		if err := s.cutPast(id, name); err != nil {
			return Past{}, false, fmt.Errorf("newest past of agent %q: %w", id, err)
		}
		read = readCutTail
	}
	t, err := read(name)
	if err != nil {
		return Past{}, false, fmt.Errorf("newest past of agent %q: %w", id, err)
	}
	return newestOf(id, name, t.frames)
}

// newestOf decodes the frame of the highest round among fs, the last of
// a round winning. Only the rounds of the others are decoded.
func newestOf(id, name string, fs []frame) (Past, bool, error) {
	best, bestRound := -1, 0
	for i, f := range fs {
		if f.typ != pastFrame {
			return Past{}, false, &CorruptError{File: name, Offset: f.off, Reason: fmt.Sprintf("frame of type %d", f.typ)}
		}
		var r struct {
			Round int `cbor:"1,keyasint"`
		}
		if err := decMode.Unmarshal(f.payload, &r); err != nil {
			return Past{}, false, &CorruptError{File: name, Offset: f.off, Reason: err.Error()}
		}
		if best < 0 || r.Round >= bestRound {
			best, bestRound = i, r.Round
		}
	}
	if best < 0 {
		return Past{}, false, nil
	}
	p, err := decodePast(id, fs[best].payload)
	return p, err == nil, err
}
