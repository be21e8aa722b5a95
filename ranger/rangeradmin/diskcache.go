package rangeradmin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// diskCache keeps the last good documents of one service in a directory:
// <service>.<document>.json as downloaded, and <service>.state.json naming
// their versions, SHA-256 digests and the time Ranger last confirmed each.
// Every file is written atomically (temporary file, fsync, rename), the
// state last, so a crash leaves either the old state or the new one; a
// document whose digest does not match its state makes the whole cache
// unusable (fail closed), never a mix.
type diskCache struct {
	dir, service string
	written      map[Document]string // digest of the body on disk
}

type cacheEntry struct {
	version   int64
	confirmed time.Time // Ranger's last 200/304 for it
	body      []byte    // nil: Ranger had nothing (optional document)
	parsed    any       // on load
}

const cacheFormat = 1

type cacheState struct {
	Format    int                   `json:"format"`
	Service   string                `json:"service"`
	Documents map[Document]cacheDoc `json:"documents"`
}

type cacheDoc struct {
	Version int64 `json:"version"`
	// ConfirmedAt is when Ranger last confirmed this document (a 200 that
	// delivered it or a 304 that said it is current). Freshness after a
	// restart counts from here, never from when the cache is read.
	ConfirmedAt time.Time `json:"confirmedAt"`
	Empty       bool      `json:"empty,omitempty"`
	File        string    `json:"file,omitempty"`
	SHA256      string    `json:"sha256,omitempty"`
}

func (c *diskCache) base() string { return url.PathEscape(c.service) }

func (c *diskCache) statePath() string { return filepath.Join(c.dir, c.base()+".state.json") }

func (c *diskCache) docFile(d Document) string { return c.base() + "." + string(d) + ".json" }

// load returns the cached documents, nil when there is no cache, or an
// error when the cache exists but cannot be trusted.
func (c *diskCache) load(docs []Document) (map[Document]cacheEntry, error) {
	raw, err := os.ReadFile(c.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ranger: policy cache: %w", err)
	}
	var st cacheState
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("ranger: policy cache %s: %w", c.statePath(), err)
	}
	if st.Format != cacheFormat || st.Service != c.service {
		return nil, fmt.Errorf("ranger: policy cache %s: format %d for service %q, want format %d for %q", c.statePath(), st.Format, st.Service, cacheFormat, c.service)
	}
	out := map[Document]cacheEntry{}
	written := map[Document]string{}
	now := time.Now()
	for _, d := range docs {
		cd, ok := st.Documents[d]
		if !ok {
			return nil, fmt.Errorf("ranger: policy cache %s has no %s (was it written with other download settings?)", c.statePath(), d)
		}
		if cd.ConfirmedAt.IsZero() || cd.ConfirmedAt.After(now.Add(time.Minute)) {
			return nil, fmt.Errorf("ranger: policy cache %s: %s confirmation time %v is not plausible", c.statePath(), d, cd.ConfirmedAt)
		}
		e := cacheEntry{version: cd.Version, confirmed: cd.ConfirmedAt}
		if cd.Empty {
			if d == DocPolicies {
				return nil, fmt.Errorf("ranger: policy cache %s: no policies", c.statePath())
			}
			out[d] = e
			continue
		}
		if cd.File != c.docFile(d) {
			return nil, fmt.Errorf("ranger: policy cache %s: unexpected file %q for %s", c.statePath(), cd.File, d)
		}
		body, err := os.ReadFile(filepath.Join(c.dir, cd.File))
		if err != nil {
			return nil, fmt.Errorf("ranger: policy cache: %w", err)
		}
		if digest(body) != cd.SHA256 {
			return nil, fmt.Errorf("ranger: policy cache: %s does not match its state (interrupted write or edited by hand)", filepath.Join(c.dir, cd.File))
		}
		parsed, version, err := parseDocumentOf(d, body)
		if err != nil {
			return nil, fmt.Errorf("ranger: policy cache %s: %w", cd.File, err)
		}
		if version != cd.Version {
			return nil, fmt.Errorf("ranger: policy cache %s: version %d, state says %d", cd.File, version, cd.Version)
		}
		e.body, e.parsed = body, parsed
		written[d] = cd.SHA256
		out[d] = e
	}
	c.written = written
	return out, nil
}

// store writes the documents whose bodies changed since the last store,
// then the state.
func (c *diskCache) store(entries map[Document]cacheEntry) error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	if c.written == nil {
		c.written = map[Document]string{}
	}
	st := cacheState{Format: cacheFormat, Service: c.service, Documents: map[Document]cacheDoc{}}
	for d, e := range entries {
		cd := cacheDoc{Version: e.version, ConfirmedAt: e.confirmed.UTC()}
		if e.body == nil {
			cd.Empty = true
			st.Documents[d] = cd
			continue
		}
		cd.File, cd.SHA256 = c.docFile(d), digest(e.body)
		if c.written[d] != cd.SHA256 {
			delete(c.written, d)
			if err := ranger.WriteFileAtomic(filepath.Join(c.dir, cd.File), e.body, 0o600); err != nil {
				return err
			}
			c.written[d] = cd.SHA256
		}
		st.Documents[d] = cd
	}
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return ranger.WriteFileAtomic(c.statePath(), raw, 0o600)
}

// remove deletes the cache (the state first: without it nothing is loaded).
func (c *diskCache) remove() error {
	c.written = nil
	err := os.Remove(c.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	for _, d := range AllDocuments {
		if e := os.Remove(filepath.Join(c.dir, c.docFile(d))); e != nil && !errors.Is(e, fs.ErrNotExist) && err == nil {
			err = e
		}
	}
	return err
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
