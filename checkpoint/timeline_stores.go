package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// pastFile is the file in an agent's directory that keeps its pasts: one
// frame (pastFrame) per Past, appended as each round commits. It is never
// synced: a power cut may take the pasts from any page it had not written
// back on (unsyncedFrames), and the run that resumes keeps a whole
// workspace at its boundary, after the gap.
const pastFile = "past"

// pastFrame is the frame type of a Past in pastFile.
const pastFrame RecordType = 50

// PutPast appends the past to agents/<id>/past, after cutting away a torn
// tail the first time since the lock was taken.
func (s *FileStore) PutPast(id string, p Past) error {
	f, done, err := s.pastFileOf(id)
	if err != nil {
		return err
	}
	buf := pastFrames.Get().(*bytes.Buffer)
	err = appendEncodedFrame(buf, pastFrame, p)
	if err == nil {
		err = appendPast(f, p.Round, buf.Bytes())
	}
	if buf.Cap() <= maxKeptBuffer {
		buf.Reset()
		pastFrames.Put(buf)
	}
	if err = errors.Join(err, done()); err != nil {
		return fmt.Errorf("keep past of agent %q: %w", id, err)
	}
	return nil
}

// pastFrames are the buffers PutPast encodes a past's frame in, reused.
var pastFrames = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// appendPast appends frame, the frame of a past of that round, to the
// past file f, and indexes it when the round is one the index keeps. The
// past is kept once its frame is written: an entry that cannot be written
// costs later reads a longer way from an older entry (readPastTail), so
// it fails no PutPast, and no round.
func appendPast(f *os.File, round int, frame []byte) error {
	if round%pastIndexEvery != 0 {
		_, err := f.Write(frame)
		return err
	}
	off, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if _, err := f.Write(frame); err != nil {
		return err
	}
	indexPast(f.Name(), off, round, frame)
	return nil
}

// cutTornPast truncates the past file at its first damage, dropping every
// frame after it (unsyncedFrames), so that the pasts appended next follow
// the ones that are read.
func cutTornPast(name string) error {
	t, err := readPastTail(name)
	if err != nil || t.end == t.size {
		return err
	}
	return os.Truncate(name, t.end)
}

// Pasts reads agents/<id>/past up to its first damage: the file is never
// synced, so what a power cut leaves of it is a torn tail however many
// whole frames follow the damage, and they are left out (unsyncedFrames).
func (s *FileStore) Pasts(id string) ([]Past, error) {
	dir, err := s.agentDir(id)
	if err != nil {
		return nil, err
	}
	name := filepath.Join(dir, pastFile)
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pasts of agent %q: %w", id, err)
	}
	fs, _ := unsyncedFrames(data)
	out := make([]Past, 0, len(fs))
	for _, f := range fs {
		if f.typ != pastFrame {
			return nil, &CorruptError{File: name, Offset: f.off, Reason: fmt.Sprintf("frame of type %d", f.typ)}
		}
		p, err := decodePast(id, f.payload)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return sortPasts(out), nil
}

// PutPast keeps the past in memory.
func (s *MemStore) PutPast(id string, p Past) error {
	if !s.Exists(id) {
		return fmt.Errorf("keep past of agent %q: %w", id, ErrNotFound)
	}
	data, err := encodePast(p)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agent(id)
	a.pasts = append(a.pasts, data)
	return nil
}

// Pasts lists the agent's pasts by round.
func (s *MemStore) Pasts(id string) ([]Past, error) {
	s.mu.Lock()
	var datas [][]byte
	if a, ok := s.agents[id]; ok {
		datas = append(datas, a.pasts...)
	}
	s.mu.Unlock()
	out := make([]Past, 0, len(datas))
	for _, d := range datas {
		p, err := decodePast(id, d)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return sortPasts(out), nil
}

// NewestPast decodes the last past kept: the host keeps an agent's pasts
// in the order of their rounds.
func (s *MemStore) NewestPast(id string) (Past, bool, error) {
	s.mu.Lock()
	var data []byte
	if a, ok := s.agents[id]; ok && len(a.pasts) > 0 {
		data = a.pasts[len(a.pasts)-1]
	}
	s.mu.Unlock()
	if data == nil {
		return Past{}, false, nil
	}
	p, err := decodePast(id, data)
	return p, err == nil, err
}
