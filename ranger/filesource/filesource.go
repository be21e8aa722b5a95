// Package filesource is policy.source = "file": the policy documents in
// local files (policy.file.policies, tags, roles, user-store), checked
// every policy.file.poll-interval-ms and delivered to the sink when they
// change. It is one of the two ranger.Source implementations, beside
// ranger/rangeradmin.
//
// A change is seen by size and modification time; the files are then
// read and parsed together (ranger.LoadFiles), and only a bundle whose
// every document parses is delivered. A failed check leaves the last good
// bundle in force; the sink decides by LastSuccess when it is too old to
// trust (policy.cache-ttl-secs).
package filesource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// Config configures a Source.
type Config struct {
	Paths ranger.FilePaths
	// PollInterval is how often the files are checked
	// (policy.file.poll-interval-ms).
	PollInterval time.Duration
	// Sink receives every bundle that parses.
	Sink ranger.Sink
	Log  *slog.Logger
}

// Source is the ranger.Source of local files.
type Source struct {
	cfg Config

	// round is held by the goroutine running a round: the poll loop's, or
	// the caller's of Start, Refresh or Reload. It serialises the sink's
	// calls and owns logged.
	round chan struct{}
	// logged is the problem last logged ("" after a bundle was installed),
	// so a problem is logged once, not once per poll. Owned by round.
	logged string

	// mu guards the check's state, which Refresh's report and Err read
	// from other goroutines.
	mu          sync.Mutex
	sig         string // size/mtime of every file at the last good read ("": read again)
	lastSuccess time.Time
	lastErr     error           // why the files could not be read or parsed
	rejected    error           // why the sink rejected the files as they are
	installed   ranger.Versions // of the bundle last installed
	// last is lastSuccess published for LastSuccess: every statement of
	// every session asks it (policystate), so it is read without mu.
	last atomic.Pointer[time.Time]
}

var _ ranger.Source = (*Source)(nil)

// New returns the source of cfg.Paths; nothing is read before Start or a
// Refresh.
func New(cfg Config) (*Source, error) {
	if cfg.Paths.Policies == "" {
		return nil, errors.New("filesource: no policy file")
	}
	if cfg.PollInterval <= 0 {
		return nil, errors.New("filesource: poll interval must be positive")
	}
	if cfg.Sink == nil {
		return nil, errors.New("filesource: no sink")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Source{cfg: cfg, round: make(chan struct{}, 1), installed: ranger.NoVersions()}, nil
}

// Paths are the files the source reads.
func (s *Source) Paths() ranger.FilePaths { return s.cfg.Paths }

// Start checks the files once, then every PollInterval on a goroutine of
// its own until ctx ends.
func (s *Source) Start(ctx context.Context) {
	s.round <- struct{}{}
	s.runRound(false)
	<-s.round
	go s.poll(ctx)
}

func (s *Source) poll(ctx context.Context) {
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := s.Refresh(ctx); err != nil {
			return
		}
	}
}

// Refresh checks the files now.
func (s *Source) Refresh(ctx context.Context) (ranger.Report, error) {
	return s.roundNow(ctx, false)
}

// Reload reads the files whatever their size and modification time: a
// writer (ranger.FileStore) replaced them, and two writes within one tick
// of the file system's clock can leave both unchanged.
func (s *Source) Reload(ctx context.Context) error {
	rep, err := s.roundNow(ctx, true)
	if err == nil && rep.Error != "" {
		err = errors.New(rep.Error)
	}
	return err
}

func (s *Source) roundNow(ctx context.Context, reread bool) (ranger.Report, error) {
	select {
	case s.round <- struct{}{}:
	case <-ctx.Done():
		return ranger.Report{}, ctx.Err()
	}
	defer func() { <-s.round }()
	return s.runRound(reread), nil
}

// runRound checks the files and installs what changed (round held).
func (s *Source) runRound(reread bool) ranger.Report {
	if reread {
		s.mu.Lock()
		s.sig = ""
		s.mu.Unlock()
	}
	b, err := s.check()
	switch {
	case err != nil:
		s.problem(err)
	case b != nil:
		ierr := s.cfg.Sink.Install(b)
		s.mu.Lock()
		s.rejected = ierr
		if ierr == nil {
			s.installed = b.Versions()
		}
		s.mu.Unlock()
		if ierr != nil {
			s.problem(ierr)
		} else {
			s.logged = ""
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := ranger.Report{Source: "file", Versions: s.installed}
	switch {
	case s.lastErr != nil:
		rep.Error = s.lastErr.Error()
	case s.rejected != nil:
		rep.Error = "rejected: " + s.rejected.Error()
	}
	return rep
}

// problem logs err unless it was the last problem logged (round held).
func (s *Source) problem(err error) {
	if err.Error() == s.logged {
		return
	}
	s.cfg.Log.Error("policy files rejected; the last good policies stay in force until policy.cache-ttl-secs passes, then governed statements are denied", "err", err)
	s.logged = err.Error()
}

// LastSuccess is the time of the last successful check (a read, or a check
// that found the good files unchanged), read without a lock: zero before
// the first.
func (s *Source) LastSuccess() time.Time {
	if t := s.last.Load(); t != nil {
		return *t
	}
	return time.Time{}
}

// Err is why the last check could not read or parse the files (nil when
// it could). It names the file: the files are the operator's, not a
// secret.
func (s *Source) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// AgesRejections is false: a check that finds rejected files unchanged
// confirms them without asking the sink, which ages the bundle in force
// from the rejection itself.
func (s *Source) AgesRejections() bool { return false }

// check looks at the files. It returns a new bundle when they changed
// and parsed, nil when nothing changed, and an error when they changed
// but do not parse (or cannot be read).
func (s *Source) check() (*ranger.Bundle, error) {
	sig, err := s.signature()
	if err != nil {
		return nil, s.failed(err)
	}
	s.mu.Lock()
	unchanged := sig == s.sig && s.lastErr == nil && !s.lastSuccess.IsZero()
	if unchanged {
		s.succeededLocked(time.Now())
	}
	s.mu.Unlock()
	if unchanged {
		return nil, nil
	}
	b, err := ranger.LoadFiles(s.cfg.Paths)
	if err != nil {
		return nil, s.failed(err)
	}
	s.mu.Lock()
	s.sig, s.lastErr = sig, nil
	s.succeededLocked(time.Now())
	s.mu.Unlock()
	return b, nil
}

// succeededLocked records a successful check at now (s.mu held).
func (s *Source) succeededLocked(now time.Time) {
	s.lastSuccess = now
	s.last.Store(&now)
}

func (s *Source) failed(err error) error {
	s.mu.Lock()
	s.lastErr = err
	s.sig = ""
	s.mu.Unlock()
	return err
}

func (s *Source) signature() (string, error) {
	var b strings.Builder
	p := s.cfg.Paths
	for _, path := range []string{p.Policies, p.Tags, p.Roles, p.UserStore} {
		if path == "" {
			b.WriteString("-;")
			continue
		}
		st, err := os.Stat(path)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%d:%d;", st.Size(), st.ModTime().UnixNano())
	}
	return b.String(), nil
}
