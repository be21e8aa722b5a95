package ranger

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// FilePaths name the local documents of policy.source = "file". Only
// Policies is required.
type FilePaths struct {
	Policies  string // ServicePolicies JSON, as Ranger Admin serves it
	Tags      string // ServiceTags JSON
	Roles     string // RangerRoles JSON
	UserStore string // RangerUserStore JSON
}

// FileSource loads a Bundle from local files and notices when they change.
// A change is seen by size and modification time; the files are then read
// and parsed together, and only a bundle whose every document parses
// replaces the current one. A failed load leaves the last good bundle in
// place; the caller decides (by LastSuccess) when it is too old to trust.
type FileSource struct {
	paths FilePaths

	mu          sync.Mutex
	sig         string // size/mtime of every file at the last good load
	lastSuccess time.Time
	lastErr     error
	// last is lastSuccess published for LastSuccess: every statement of
	// every session asks it (policystate), so it is read without mu.
	last atomic.Pointer[time.Time]
}

// NewFileSource returns a source for paths.
func NewFileSource(paths FilePaths) *FileSource {
	return &FileSource{paths: paths}
}

// Paths are the files the source reads.
func (f *FileSource) Paths() FilePaths { return f.paths }

// Status reports the time of the last successful check (a load, or a check
// that found the good files unchanged) and the last error ("" if none).
func (f *FileSource) Status() (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastSuccess, f.lastErr
}

// LastSuccess is Status's time, read without a lock (an atomic load):
// zero before the first successful check.
func (f *FileSource) LastSuccess() time.Time {
	if t := f.last.Load(); t != nil {
		return *t
	}
	return time.Time{}
}

// Err is Status's error.
func (f *FileSource) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastErr
}

// succeededLocked records a successful check at now (f.mu held).
func (f *FileSource) succeededLocked(now time.Time) {
	f.lastSuccess = now
	f.last.Store(&now)
}

// Invalidate makes the next Check read the files whatever their size and
// modification time: a writer (FileStore) that replaced them calls it, since
// two writes within one tick of the file system's clock can leave both
// unchanged.
func (f *FileSource) Invalidate() {
	f.mu.Lock()
	f.sig = ""
	f.mu.Unlock()
}

// Check looks at the files. It returns a new bundle when they changed and
// parsed, nil when nothing changed, and an error when they changed but do
// not parse (or cannot be read).
func (f *FileSource) Check() (*Bundle, error) {
	sig, err := f.signature()
	if err != nil {
		return nil, f.failed(err)
	}
	f.mu.Lock()
	unchanged := sig == f.sig && f.lastErr == nil && !f.lastSuccess.IsZero()
	if unchanged {
		f.succeededLocked(time.Now())
	}
	f.mu.Unlock()
	if unchanged {
		return nil, nil
	}
	b, err := f.load()
	if err != nil {
		return nil, f.failed(err)
	}
	f.mu.Lock()
	f.sig, f.lastErr = sig, nil
	f.succeededLocked(time.Now())
	f.mu.Unlock()
	return b, nil
}

func (f *FileSource) failed(err error) error {
	f.mu.Lock()
	f.lastErr = err
	f.sig = ""
	f.mu.Unlock()
	return err
}

// Run checks every interval until ctx ends, calling onBundle with each new
// bundle and onError with each failed check.
func (f *FileSource) Run(ctx context.Context, interval time.Duration, onBundle func(*Bundle), onError func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b, err := f.Check()
		switch {
		case err != nil:
			onError(err)
		case b != nil:
			onBundle(b)
		}
	}
}

func (f *FileSource) signature() (string, error) {
	var b strings.Builder
	for _, p := range []string{f.paths.Policies, f.paths.Tags, f.paths.Roles, f.paths.UserStore} {
		if p == "" {
			b.WriteString("-;")
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%d:%d;", st.Size(), st.ModTime().UnixNano())
	}
	return b.String(), nil
}

func (f *FileSource) load() (*Bundle, error) {
	data, err := os.ReadFile(f.paths.Policies)
	if err != nil {
		return nil, err
	}
	b := &Bundle{}
	if b.Policies, err = ParseServicePolicies(data); err != nil {
		return nil, fmt.Errorf("%s: %w", f.paths.Policies, err)
	}
	if f.paths.Tags != "" {
		data, err := os.ReadFile(f.paths.Tags)
		if err != nil {
			return nil, err
		}
		if b.Tags, err = ParseServiceTags(data); err != nil {
			return nil, fmt.Errorf("%s: %w", f.paths.Tags, err)
		}
	}
	if f.paths.Roles != "" {
		data, err := os.ReadFile(f.paths.Roles)
		if err != nil {
			return nil, err
		}
		if b.Roles, err = ParseRoles(data); err != nil {
			return nil, fmt.Errorf("%s: %w", f.paths.Roles, err)
		}
	}
	if f.paths.UserStore != "" {
		data, err := os.ReadFile(f.paths.UserStore)
		if err != nil {
			return nil, err
		}
		if b.UserStore, err = ParseUserStore(data); err != nil {
			return nil, fmt.Errorf("%s: %w", f.paths.UserStore, err)
		}
	}
	return b, nil
}
