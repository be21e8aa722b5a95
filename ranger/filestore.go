package ranger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FileStore writes the documents of policy.source = "file": authoring
// statements and `pgranger policy sync` change the policy file (and the
// tag file) through it. Every change is a read of the file as it is now,
// the change, a version bump (policyVersion or tagVersion, as Ranger Admin
// bumps them) and an atomic replacement: the new document is written to a
// temporary file in the same directory, synced, and renamed over the old
// one, so the file source never reads half a document. Writes through one
// FileStore are serialised; two processes writing one file are not (the
// last writer wins, as with Ranger Admin, which has no optimistic
// concurrency either).
type FileStore struct {
	paths FilePaths
	now   func() time.Time

	mu sync.Mutex
}

// ErrNoTagFile: tags cannot be written because policy.file.tags is not set.
var ErrNoTagFile = errors.New("policy.file.tags is not set: there is no tag file to write tags to")

// NewFileStore returns a store for paths (Policies required).
func NewFileStore(paths FilePaths) *FileStore {
	return &FileStore{paths: paths, now: time.Now}
}

// Paths are the files the store writes.
func (s *FileStore) Paths() FilePaths { return s.paths }

// Policies reads the policy file as it is now.
func (s *FileStore) Policies() (*ServicePolicies, error) {
	data, err := os.ReadFile(s.paths.Policies)
	if err != nil {
		return nil, err
	}
	sp, err := ParseServicePolicies(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.paths.Policies, err)
	}
	return sp, nil
}

// UpdatePolicies reads the policy file, lets change edit it, and — when
// change reports a change — bumps policyVersion and writes it back. It
// returns the document as written (or as read, when nothing changed).
func (s *FileStore) UpdatePolicies(change func(sp *ServicePolicies, now time.Time) (bool, error)) (*ServicePolicies, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp, err := s.Policies()
	if err != nil {
		return nil, err
	}
	now := s.now()
	changed, err := change(sp, now)
	if err != nil || !changed {
		return sp, err
	}
	sp.Bump(now)
	data, err := MarshalDocument(sp)
	if err != nil {
		return nil, err
	}
	return sp, writeAtomic(s.paths.Policies, data)
}

// Tags reads the tag file as it is now.
func (s *FileStore) Tags() (*ServiceTags, error) {
	if s.paths.Tags == "" {
		return nil, ErrNoTagFile
	}
	data, err := os.ReadFile(s.paths.Tags)
	if err != nil {
		return nil, err
	}
	st, err := ParseServiceTags(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.paths.Tags, err)
	}
	return st, nil
}

// UpdateTags is UpdatePolicies for the tag file (tagVersion bumped).
func (s *FileStore) UpdateTags(change func(st *ServiceTags, now time.Time) (bool, error)) (*ServiceTags, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.Tags()
	if err != nil {
		return nil, err
	}
	now := s.now()
	changed, err := change(st, now)
	if err != nil || !changed {
		return st, err
	}
	st.Bump(now)
	data, err := MarshalDocument(st)
	if err != nil {
		return nil, err
	}
	return st, writeAtomic(s.paths.Tags, data)
}

// writeAtomic replaces path with data, keeping the file's mode (0644 for
// a new file): readers see the old document or the new one and a crash
// leaves one of them.
func writeAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	return WriteFileAtomic(path, data, mode)
}

// WriteFileAtomic replaces path with data in the given mode: a temporary
// file in the same directory, synced, then renamed over path, and the
// directory synced (best effort). The policy files and Ranger Admin's
// disk cache are written this way.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: not every file system syncs directories
		d.Close()
	}
	return nil
}
