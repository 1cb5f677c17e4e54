package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
)

// A module's source is what compiling it again and taking its snapshots
// again need: its code as rewritten (Module.wasm), and for a fast-mode
// module the data its initialisation writes (preinit.rx.Data), megabytes
// for a Go module. Once its compiled code and snapshots are let go of
// (Trim), nothing needs the source until the next call, so Trim puts it
// away: into a file of its own in the compile cache's directory, unlinked
// at once and kept open, so that the system holds it on disk and no one
// else can change or remove it. The first that needs it reads it back.
type source struct {
	mu   sync.Mutex
	file *os.File // the source put away; nil while it is held
	sum  uint32   // of what file holds (CRC-32C)
}

// crc32c is the table of the source's checksum.
var crc32c = crc32.MakeTable(crc32.Castagnoli)

// errSourceLost is a source put away that cannot be read back as written.
var errSourceLost = errors.New("the module's source put away while idle cannot be read back")

// code returns the module's code, reading it back if it was put away.
func (m *Module) code() ([]byte, error) {
	if err := m.heldSource(); err != nil {
		return nil, err
	}
	return m.wasm, nil
}

// dataRuns returns the data of a fast-mode module's initialisation,
// reading it back if it was put away.
func (m *Module) dataRuns() ([]wasmcode.DataRun, error) {
	if err := m.heldSource(); err != nil {
		return nil, err
	}
	return m.pre.rx.Data, nil
}

// heldSource reads the source back if it was put away.
func (m *Module) heldSource() error {
	s := &m.src
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return nil
	}
	b, err := io.ReadAll(io.NewSectionReader(s.file, 0, 1<<62))
	if err != nil {
		return fmt.Errorf("%w: %v", errSourceLost, err)
	}
	if crc32.Checksum(b, crc32c) != s.sum {
		return fmt.Errorf("%w: its checksum does not match", errSourceLost)
	}
	code, data, err := decodeSource(b)
	if err != nil {
		return err
	}
	m.wasm = code
	if m.pre != nil {
		m.pre.rx.Data = data
	}
	s.file.Close()
	s.file = nil
	return nil
}

// putAwaySource puts the source away in dir (see source), unless it is
// already. A source that cannot be written is kept in memory.
func (m *Module) putAwaySource(dir string) {
	s := &m.src
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil || dir == "" {
		return
	}
	var data []wasmcode.DataRun
	if m.pre != nil {
		data = m.pre.rx.Data
	}
	b := encodeSource(m.wasm, data)
	f, err := writeUnlinked(dir, b)
	if err != nil {
		return
	}
	s.file, s.sum = f, crc32.Checksum(b, crc32c)
	m.wasm = nil
	if m.pre != nil {
		m.pre.rx.Data = nil
	}
}

// writeUnlinked writes b to a new file in dir, removes its name and
// returns it open.
func writeUnlinked(dir string, b []byte) (*os.File, error) {
	f, err := os.CreateTemp(dir, "cairn-source-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// encodeSource lays out a source: the code's length (8 bytes, little
// endian) and the code, then for each data run its offset and length (8
// bytes each) and its bytes.
func encodeSource(code []byte, data []wasmcode.DataRun) []byte {
	n := 8 + len(code)
	for _, d := range data {
		n += 16 + len(d.B)
	}
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, n), uint64(len(code)))
	b = append(b, code...)
	for _, d := range data {
		b = binary.LittleEndian.AppendUint64(b, d.Off)
		b = binary.LittleEndian.AppendUint64(b, uint64(len(d.B)))
		b = append(b, d.B...)
	}
	return b
}

// decodeSource reads what encodeSource wrote.
func decodeSource(b []byte) (code []byte, data []wasmcode.DataRun, err error) {
	next := func() (uint64, bool) {
		if len(b) < 8 {
			return 0, false
		}
		v := binary.LittleEndian.Uint64(b)
		b = b[8:]
		return v, true
	}
	bad := fmt.Errorf("%w: it is not laid out as written", errSourceLost)
	n, ok := next()
	if !ok || n > uint64(len(b)) {
		return nil, nil, bad
	}
	code, b = b[:n:n], b[n:]
	for len(b) > 0 {
		off, ok1 := next()
		n, ok2 := next()
		if !ok1 || !ok2 || n > uint64(len(b)) {
			return nil, nil, bad
		}
		data = append(data, wasmcode.DataRun{Off: off, B: b[:n:n]})
		b = b[n:]
	}
	return code, data, nil
}
