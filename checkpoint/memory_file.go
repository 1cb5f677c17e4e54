package checkpoint

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// memoryDir is the directory of memory namespaces in a FileStore: one
// directory per namespace, one file per fact, named by the hex of its key,
// so that writers of different keys never touch one file.
const memoryDir = "memory"

func (s *FileStore) factPath(ns, key string) (string, error) {
	if err := CheckMemoryNamespace(ns); err != nil {
		return "", err
	}
	if err := checkFact(Fact{Key: key}); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, memoryDir, ns, hex.EncodeToString([]byte(key))+".cbor"), nil
}

// Remember writes memory/<ns>/<hex key>.cbor atomically.
func (s *FileStore) Remember(ns string, f Fact) error {
	data, err := EncodeFact(f)
	if err != nil {
		return err
	}
	path, err := s.factPath(ns, f.Key)
	if err != nil {
		return err
	}
	if err := ensureDir(filepath.Dir(filepath.Dir(path))); err != nil {
		return fmt.Errorf("remember %s in %s: %w", f.Key, ns, err)
	}
	if err := ensureDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("remember %s in %s: %w", f.Key, ns, err)
	}
	if err := writeAtomic(path, data); err != nil {
		return fmt.Errorf("remember %s in %s: %w", f.Key, ns, err)
	}
	return nil
}

// Recall reads every fact of memory/<ns>/, ignoring temp files.
func (s *FileStore) Recall(ns string) ([]Fact, error) {
	if err := CheckMemoryNamespace(ns); err != nil {
		return nil, err
	}
	dir := filepath.Join(s.dir, memoryDir, ns)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recall %s: %w", ns, err)
	}
	var out []Fact
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".cbor") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("recall %s: %w", ns, err)
		}
		f, err := DecodeFact(path, data)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	sortFacts(out)
	return out, nil
}

// Forget removes memory/<ns>/<hex key>.cbor and syncs the directory.
func (s *FileStore) Forget(ns, key string) error {
	path, err := s.factPath(ns, key)
	if err != nil {
		return err
	}
	err = os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("forget %s in %s: %w", key, ns, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("forget %s in %s: %w", key, ns, err)
	}
	return syncDir(filepath.Dir(path))
}

// Namespaces lists the directories of memory/ that hold a fact.
func (s *FileStore) Namespaces() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, memoryDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list memory: %w", err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() || CheckMemoryNamespace(e.Name()) != nil {
			continue
		}
		facts, _ := filepath.Glob(filepath.Join(s.dir, memoryDir, e.Name(), "*.cbor"))
		if len(facts) > 0 {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

func sortFacts(fs []Fact) { sort.Slice(fs, func(i, j int) bool { return fs[i].Key < fs[j].Key }) }

// Remember keeps the encoded fact.
func (s *MemStore) Remember(ns string, f Fact) error {
	if err := CheckMemoryNamespace(ns); err != nil {
		return err
	}
	data, err := EncodeFact(f)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.memory == nil {
		s.memory = map[string]map[string][]byte{}
	}
	if s.memory[ns] == nil {
		s.memory[ns] = map[string][]byte{}
	}
	s.memory[ns][f.Key] = data
	return nil
}

// Recall decodes the namespace's facts.
func (s *MemStore) Recall(ns string) ([]Fact, error) {
	if err := CheckMemoryNamespace(ns); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Fact
	for key, data := range s.memory[ns] {
		f, err := DecodeFact("fact "+key+" of "+ns, data)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	sortFacts(out)
	return out, nil
}

// Forget removes a fact.
func (s *MemStore) Forget(ns, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.memory[ns][key]; !ok {
		return fmt.Errorf("forget %s in %s: %w", key, ns, ErrNotFound)
	}
	delete(s.memory[ns], key)
	return nil
}

// Namespaces lists the namespaces that hold a fact.
func (s *MemStore) Namespaces() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for ns, facts := range s.memory {
		if len(facts) > 0 {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out, nil
}
