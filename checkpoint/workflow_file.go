package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// workflowDir is the directory of workflow records in a FileStore.
const workflowDir = "workflows"

func (s *FileStore) workflowPath(id string) (string, error) {
	if err := CheckID(id); err != nil {
		return "", fmt.Errorf("workflow: %w", err)
	}
	return filepath.Join(s.dir, workflowDir, id+".cbor"), nil
}

// PutWorkflow writes workflows/<id>.cbor atomically: temp file, fsync,
// rename, fsync of the directory.
func (s *FileStore) PutWorkflow(w *Workflow) error {
	data, err := EncodeWorkflow(w)
	if err != nil {
		return err
	}
	path, err := s.workflowPath(w.ID)
	if err != nil {
		return err
	}
	if err := ensureDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("put workflow %s: %w", w.ID, err)
	}
	if err := writeAtomic(path, data); err != nil {
		return fmt.Errorf("put workflow %s: %w", w.ID, err)
	}
	return nil
}

// ensureDir makes dir if it is missing and syncs its parent, so the new
// name survives a power cut.
func ensureDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// Workflow reads workflows/<id>.cbor, refusing a record that is damaged
// or that holds another workflow, with what to do about the file.
func (s *FileStore) Workflow(id string) (*Workflow, error) {
	path, err := s.workflowPath(id)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("workflow %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read workflow %s: %w", id, err)
	}
	w, err := DecodeWorkflow(path, id, data)
	var ce *WorkflowCorruptError
	if errors.As(err, &ce) {
		ce.Fix = fileFix(ce, path)
	}
	return w, err
}

// fileFix says what to do about the damaged record in the file path.
func fileFix(e *WorkflowCorruptError, path string) string {
	aside := fmt.Sprintf("move %s out of %s", filepath.Base(path), filepath.Dir(path))
	if e.Holds != "" {
		return fmt.Sprintf("%s: it is not the record of workflow %s, and %s is read from %s.cbor, if it is there",
			aside, e.ID, e.Holds, e.Holds)
	}
	return fmt.Sprintf("restore %s from a backup, or %s to give workflow %s up (its step agents stay in the store)", path, aside, e.ID)
}

// WorkflowIDs lists workflows/*.cbor, ignoring temp files.
func (s *FileStore) WorkflowIDs() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, workflowDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list workflows: %w", err)
	}
	var ids []string
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".cbor"); ok && CheckID(id) == nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// PutWorkflow keeps the encoded record.
func (s *MemStore) PutWorkflow(w *Workflow) error {
	data, err := EncodeWorkflow(w)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.workflows == nil {
		s.workflows = map[string][]byte{}
	}
	s.workflows[w.ID] = data
	return nil
}

// Workflow decodes the kept record.
func (s *MemStore) Workflow(id string) (*Workflow, error) {
	s.mu.Lock()
	data, ok := s.workflows[id]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("workflow %s: %w", id, ErrNotFound)
	}
	return DecodeWorkflow(id+" (in memory)", id, data)
}

// WorkflowIDs lists the kept records.
func (s *MemStore) WorkflowIDs() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.workflows))
	for id := range s.workflows {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}
