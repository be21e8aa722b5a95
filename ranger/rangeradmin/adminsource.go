package rangeradmin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// AdminSourceConfig configures an AdminSource.
type AdminSourceConfig struct {
	Client *AdminClient
	// Documents are the documents to download; DocPolicies is always one
	// of them (added when missing).
	Documents    []Document
	PollInterval time.Duration
	// Jitter shortens each wait by up to this fraction of PollInterval
	// (default 0.1), so replicas started together spread out, and a change
	// is still seen within one interval.
	Jitter float64
	// CacheDir keeps the last good documents on disk ("" = no disk cache).
	CacheDir string
	// The breaker opens after BreakerFailures failed rounds in a row
	// (default 3) and then waits PollInterval × 2, × 4, … up to
	// BreakerMaxBackoff (default 5 minutes) between attempts.
	BreakerFailures   int
	BreakerMaxBackoff time.Duration
	Log               *slog.Logger

	// Sink receives each new bundle. Install's error rejects it: the
	// documents that changed do not count as downloaded (they age toward
	// the TTL), are not cached, and are downloaded again next round. Clear
	// is called when Ranger says the service does not exist: the
	// service's policies must be dropped (every governed statement denied).
	Sink ranger.Sink
}

// AdminSource is the ranger.Source of Ranger Admin: it keeps a service's
// documents current with a round every PollInterval (with jitter), a
// circuit breaker with exponential backoff when Ranger keeps failing,
// Refresh and Reload for "now", and an on-disk cache for restarts while
// Ranger is down.
//
// Freshness is per document: a document is fresh when Ranger last
// confirmed it (200 or 304); the source is as fresh as its oldest
// document, so stale tags or roles make the whole bundle stale.
type AdminSource struct {
	cfg   AdminSourceConfig
	cache *diskCache

	// round is held by the goroutine running a round: the poll loop's
	// (started by Start), or the caller's of Start, Refresh or Reload. A
	// round's documents are fetched on goroutines of their own, which
	// only the round's goroutine waits for; the sink is called by the
	// round's goroutine.
	round chan struct{}

	// mu guards the documents' state, which the round writes and Status,
	// Snapshot, Err and the metrics read from other goroutines.
	mu             sync.Mutex
	docs           map[Document]*docState
	lastActivation time.Time
	// last publishes lastSuccessLocked for LastSuccess, read by every
	// statement of every session (policystate) without taking mu; each
	// change to a document's lastSuccess or have stores it again
	// (publishLocked).
	last    atomic.Pointer[time.Time]
	gone    string // why the service's policies were dropped ("" = not)
	pending bool   // documents downloaded but not installed (bundle incomplete)
	lastErr error
	breaker breaker
	logged  map[Document]string // last failure logged per document
}

type docState struct {
	// Current (installed) document: body/parsed are nil for an optional
	// document Ranger has nothing for (304 to version -1).
	body    []byte
	parsed  any
	version int64
	have    bool // a current value exists (possibly "nothing")

	lastSuccess time.Time
	lastAttempt time.Time
	lastStatus  string
	lastErr     error
	fetches     map[string]uint64
}

var _ ranger.Source = (*AdminSource)(nil)

type breaker struct {
	threshold  int
	maxBackoff time.Duration
	failures   int // failed rounds in a row
	openUntil  time.Time
}

// Breaker states.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half-open"
)

func (b *breaker) state(now time.Time) string {
	switch {
	case b.failures < b.threshold:
		return BreakerClosed
	case now.Before(b.openUntil):
		return BreakerOpen
	default:
		return BreakerHalfOpen
	}
}

func (b *breaker) fail(now time.Time, poll time.Duration) {
	b.failures++
	if b.failures < b.threshold {
		return
	}
	// poll × 2^(failures past the threshold + 1), capped (doubling stops at
	// the cap, so it cannot overflow).
	backoff := poll
	for i := 0; i <= b.failures-b.threshold && backoff < b.maxBackoff; i++ {
		backoff *= 2
	}
	backoff = min(backoff, b.maxBackoff)
	b.openUntil = now.Add(backoff)
}

func (b *breaker) succeed() { b.failures, b.openUntil = 0, time.Time{} }

// NewAdminSource checks cfg. It does not contact Ranger or read the cache.
func NewAdminSource(cfg AdminSourceConfig) (*AdminSource, error) {
	if cfg.Client == nil {
		return nil, errors.New("ranger: admin source without a client")
	}
	if cfg.PollInterval <= 0 {
		return nil, errors.New("ranger: poll interval must be positive")
	}
	if cfg.Jitter <= 0 || cfg.Jitter >= 1 {
		cfg.Jitter = 0.1
	}
	if cfg.BreakerFailures <= 0 {
		cfg.BreakerFailures = 3
	}
	if cfg.BreakerMaxBackoff <= 0 {
		cfg.BreakerMaxBackoff = 5 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Sink == nil {
		return nil, errors.New("ranger: admin source without a sink")
	}
	docs := []Document{DocPolicies}
	for _, d := range AllDocuments {
		if d == DocPolicies {
			continue
		}
		for _, want := range cfg.Documents {
			if want == d {
				docs = append(docs, d)
				break
			}
		}
	}
	cfg.Documents = docs
	s := &AdminSource{
		cfg:     cfg,
		round:   make(chan struct{}, 1),
		docs:    map[Document]*docState{},
		breaker: breaker{threshold: cfg.BreakerFailures, maxBackoff: cfg.BreakerMaxBackoff},
		logged:  map[Document]string{},
	}
	for _, d := range docs {
		s.docs[d] = &docState{version: -1, fetches: map[string]uint64{}}
	}
	if cfg.CacheDir != "" {
		s.cache = &diskCache{dir: cfg.CacheDir, service: cfg.Client.cfg.ServiceName}
	}
	return s, nil
}

// Documents returns the documents this source downloads, in fetch order.
func (s *AdminSource) Documents() []Document { return append([]Document(nil), s.cfg.Documents...) }

// LoadCache installs the documents of the on-disk cache, if there is a
// complete and intact one for this service. Their freshness is the time
// Ranger last confirmed them before they were written, so a cache never
// makes policies look newer than they are: past the TTL they are denied as
// if they had been kept in memory. It returns whether a bundle was
// installed.
func (s *AdminSource) LoadCache() (bool, error) {
	if s.cache == nil {
		return false, nil
	}
	entries, err := s.cache.load(s.cfg.Documents)
	if err != nil || entries == nil {
		return false, err
	}
	b := &ranger.Bundle{}
	for d, e := range entries {
		setBundleDoc(b, d, e.parsed)
	}
	if err := s.cfg.Sink.Install(b); err != nil {
		return false, fmt.Errorf("ranger: cached documents in %s rejected: %w", s.cfg.CacheDir, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for d, e := range entries {
		st := s.docs[d]
		st.body, st.parsed, st.version, st.have = e.body, e.parsed, e.version, true
		st.lastSuccess = e.confirmed
		st.lastStatus = "cache"
	}
	s.publishLocked()
	return true, nil
}

// Status reports the source's freshness with its details: the time of the
// oldest document's last confirmation by Ranger (zero if a document was
// never obtained), and the error of the last round (nil if it succeeded).
func (s *AdminSource) Status() (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastSuccessLocked(), s.lastErrLocked()
}

// LastSuccess is Status's time, read without a lock (an atomic load).
func (s *AdminSource) LastSuccess() time.Time {
	if t := s.last.Load(); t != nil {
		return *t
	}
	return time.Time{}
}

// errUnavailable is Err's answer: the details (URLs, status, Ranger's
// message) are in the log and Status; SQL clients learn only that Ranger
// is the problem.
var errUnavailable = errors.New("policies could not be downloaded from Ranger Admin; the pgranger log has the details")

// Err tells SQL clients whether the last round failed (nil if it
// succeeded), without its details.
func (s *AdminSource) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastErrLocked() != nil {
		return errUnavailable
	}
	return nil
}

// AgesRejections is true: a rejected version is downloaded again, and
// only Ranger confirming the version in force (a 304) renews LastSuccess.
func (s *AdminSource) AgesRejections() bool { return true }

// publishLocked stores lastSuccessLocked for LastSuccess (s.mu held).
func (s *AdminSource) publishLocked() {
	t := s.lastSuccessLocked()
	s.last.Store(&t)
}

func (s *AdminSource) lastSuccessLocked() time.Time {
	var oldest time.Time
	for i, d := range s.cfg.Documents {
		st := s.docs[d]
		if !st.have || st.lastSuccess.IsZero() {
			return time.Time{}
		}
		if i == 0 || st.lastSuccess.Before(oldest) {
			oldest = st.lastSuccess
		}
	}
	return oldest
}

func (s *AdminSource) lastErrLocked() error {
	if s.gone != "" {
		return errors.New(s.gone)
	}
	return s.lastErr
}

// SourceStatus is a snapshot for the admin endpoint and metrics.
type SourceStatus struct {
	ServiceName string
	URLs        []string
	LastSuccess time.Time // the oldest document's last confirmation
	LastError   string
	ServiceGone bool
	Documents   []DocumentStatus
	Breaker     BreakerStatus
}

// DocumentStatus is one document's part of a SourceStatus.
type DocumentStatus struct {
	Document    Document
	Version     int64 // -1 when none
	LastSuccess time.Time
	LastAttempt time.Time
	LastStatus  string            // "200", "304", "transport_error", "cache", …
	LastError   string            // "" when the last attempt succeeded
	Fetches     map[string]uint64 // by status, since start
}

// BreakerStatus is the circuit breaker's part of a SourceStatus.
type BreakerStatus struct {
	State               string // closed, open, half-open
	ConsecutiveFailures int
	OpenUntil           time.Time
}

// Snapshot returns the current status.
func (s *AdminSource) Snapshot() SourceStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	out := SourceStatus{
		ServiceName: s.cfg.Client.cfg.ServiceName,
		URLs:        s.cfg.Client.URLs(),
		LastSuccess: s.lastSuccessLocked(),
		ServiceGone: s.gone != "",
		Breaker:     BreakerStatus{State: s.breaker.state(now), ConsecutiveFailures: s.breaker.failures, OpenUntil: s.breaker.openUntil},
	}
	if err := s.lastErrLocked(); err != nil {
		out.LastError = err.Error()
	}
	for _, d := range s.cfg.Documents {
		st := s.docs[d]
		ds := DocumentStatus{Document: d, Version: st.version, LastSuccess: st.lastSuccess, LastAttempt: st.lastAttempt,
			LastStatus: st.lastStatus, Fetches: map[string]uint64{}}
		if st.lastErr != nil {
			ds.LastError = st.lastErr.Error()
		}
		for k, v := range st.fetches {
			ds.Fetches[k] = v
		}
		out.Documents = append(out.Documents, ds)
	}
	return out
}

// Start installs the disk cache, if any, then downloads once, bounded by
// the client's timeout, and refreshes on a goroutine of its own until ctx
// ends (poll).
func (s *AdminSource) Start(ctx context.Context) {
	if ok, err := s.LoadCache(); err != nil {
		s.cfg.Log.Warn("policy.ranger.cache-dir: the disk cache is not used", "err", err)
	} else if ok {
		last, _ := s.Status()
		s.cfg.Log.Info("policies loaded from the disk cache; they count as fresh from their last confirmation by Ranger",
			"cache-dir", s.cfg.CacheDir, "confirmed", last.Format(time.RFC3339Nano))
	}
	first, cancel := context.WithTimeout(ctx, s.cfg.Client.cfg.Timeout)
	rep, _ := s.Refresh(first)
	cancel()
	if rep.Error != "" {
		s.cfg.Log.Warn("the first download from Ranger Admin failed; refreshing in the background", "urls", s.cfg.Client.URLs())
	}
	go s.poll(ctx)
}

// Refresh runs a round now, whatever the breaker says (an operator asked),
// and returns what it got. It waits for a round already running.
func (s *AdminSource) Refresh(ctx context.Context) (ranger.Report, error) {
	select {
	case s.round <- struct{}{}:
	case <-ctx.Done():
		return ranger.Report{}, ctx.Err()
	}
	defer func() { <-s.round }()
	return s.runRound(ctx), nil
}

// Reload runs a round now, as Refresh: Ranger Admin answers every round
// with what it holds, so a write made before it is in what it gets.
func (s *AdminSource) Reload(ctx context.Context) error {
	rep, err := s.Refresh(ctx)
	if err == nil && rep.Error != "" {
		err = errors.New(rep.Error)
	}
	return err
}

// poll refreshes until ctx ends: every PollInterval less up to Jitter of
// it, or, while the breaker is open, when its backoff ends.
func (s *AdminSource) poll(ctx context.Context) {
	t := time.NewTimer(s.nextDelay())
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
		t.Reset(s.nextDelay())
	}
}

func (s *AdminSource) nextDelay() time.Duration {
	poll := s.cfg.PollInterval
	d := poll - time.Duration(rand.Float64()*s.cfg.Jitter*float64(poll))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.breaker.failures >= s.breaker.threshold {
		if wait := time.Until(s.breaker.openUntil); wait > 0 {
			d = wait - time.Duration(rand.Float64()*s.cfg.Jitter*float64(wait))
		}
	}
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return d
}

func (s *AdminSource) runRound(ctx context.Context) ranger.Report {
	// The documents are fetched side by side (as the Java plugin's separate
	// refreshers do), so a hanging admin costs one timeout per round, not
	// one per document.
	s.mu.Lock()
	activation := s.lastActivation
	last := map[Document]int64{}
	for _, d := range s.cfg.Documents {
		last[d] = s.docs[d].version
	}
	s.mu.Unlock()
	fetched := make([]FetchResult, len(s.cfg.Documents))
	var wg sync.WaitGroup
	for i, d := range s.cfg.Documents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fetched[i] = s.cfg.Client.Fetch(ctx, d, last[d], activation)
		}()
	}
	wg.Wait()
	if errors.Is(ctx.Err(), context.Canceled) {
		// Shutting down, or the caller went away: the round proves nothing
		// either way and is not recorded.
		return s.report(nil)
	}
	results := map[Document]FetchResult{}
	for i, d := range s.cfg.Documents {
		results[d] = fetched[i]
	}
	now := time.Now()

	for _, d := range s.cfg.Documents {
		if r, ok := results[d]; ok && r.Outcome == ServiceNotFound {
			s.serviceGone(now, results, r.Err)
			return s.report(results)
		}
	}

	s.mu.Lock()
	// A 304 to version -1 for policies is not an answer to build on.
	for d, r := range results {
		if r.Outcome == NotModified && d == DocPolicies && !s.docs[d].have {
			r.Outcome, r.Err = Failed, fmt.Errorf("%s %s: HTTP %s although pgranger has no policies yet", d, r.URL, r.Status)
			results[d] = r
		}
	}
	// The candidate: current documents with the changed ones replaced.
	changed := false
	complete := true
	cand := map[Document]any{}
	for _, d := range s.cfg.Documents {
		st := s.docs[d]
		r, ok := results[d]
		switch {
		case ok && r.Outcome == Updated:
			changed = true
			cand[d] = r.Parsed
		case ok && r.Outcome == NotModified && !st.have:
			changed = true
			cand[d] = nil // Ranger has nothing for this optional document
		case st.have:
			cand[d] = st.parsed
		default:
			complete = false
		}
	}
	needInstall := changed || s.pending || s.gone != ""
	s.mu.Unlock()

	var installErr error
	installed := false
	if complete && needInstall {
		b := &ranger.Bundle{}
		for d, p := range cand {
			setBundleDoc(b, d, p)
		}
		if installErr = s.cfg.Sink.Install(b); installErr == nil {
			installed = true
		}
	}

	s.mu.Lock()
	var errs []error
	for _, d := range s.cfg.Documents {
		r, ok := results[d]
		if !ok {
			continue
		}
		st := s.docs[d]
		st.lastAttempt = now
		st.lastStatus = r.Status
		st.fetches[r.Status]++
		switch r.Outcome {
		case Updated:
			if installErr != nil {
				st.lastErr = fmt.Errorf("%s version %d downloaded but rejected: %w", d, r.Version, installErr)
				errs = append(errs, st.lastErr)
				continue
			}
			// When the bundle is incomplete the document is kept until the
			// others arrive (pending), not yet in force.
			st.body, st.parsed, st.version, st.have = r.Body, r.Parsed, r.Version, true
			st.lastSuccess, st.lastErr = now, nil
		case NotModified:
			if !st.have {
				st.body, st.parsed, st.have = nil, nil, true
			}
			if installErr == nil {
				st.lastSuccess, st.lastErr = now, nil
			}
		default:
			st.lastErr = r.Err
			errs = append(errs, r.Err)
		}
	}
	if !complete {
		var missing []string
		for _, d := range s.cfg.Documents {
			if !s.docs[d].have {
				missing = append(missing, string(d))
			}
		}
		if len(missing) > 0 && len(errs) == 0 {
			errs = append(errs, fmt.Errorf("no %s downloaded yet", strings.Join(missing, ", ")))
		}
	}
	switch {
	case installed:
		s.lastActivation = now
		s.gone = ""
		s.pending = false
	case !complete && changed:
		s.pending = true
	}
	s.publishLocked()
	s.lastErr = errors.Join(errs...)
	if len(errs) > 0 {
		s.breaker.fail(now, s.cfg.PollInterval)
	} else {
		s.breaker.succeed()
	}
	breakerState, failures, openUntil := s.breaker.state(now), s.breaker.failures, s.breaker.openUntil
	var toCache map[Document]cacheEntry
	if s.cache != nil && len(errs) == 0 && !s.pending && s.gone == "" && s.lastSuccessLocked().Equal(now) {
		toCache = s.cacheEntriesLocked()
	}
	s.mu.Unlock()

	s.logRound(results, installErr, breakerState, failures, openUntil)
	if toCache != nil {
		if err := s.cache.store(toCache); err != nil {
			s.cfg.Log.Warn("ranger: could not write the policy cache; a restart while Ranger is down will have no policies", "cache-dir", s.cfg.CacheDir, "err", err)
		}
	}
	return s.report(results)
}

// cacheEntriesLocked describes every document for the cache.
func (s *AdminSource) cacheEntriesLocked() map[Document]cacheEntry {
	out := map[Document]cacheEntry{}
	for _, d := range s.cfg.Documents {
		st := s.docs[d]
		out[d] = cacheEntry{version: st.version, confirmed: st.lastSuccess, body: st.body}
	}
	return out
}

func (s *AdminSource) serviceGone(now time.Time, results map[Document]FetchResult, cause error) {
	reason := fmt.Sprintf("Ranger Admin reports that service %q does not exist (%s); its policies were dropped", s.cfg.Client.cfg.ServiceName, ServiceNotFoundMarker)
	s.mu.Lock()
	first := s.gone == ""
	for _, d := range s.cfg.Documents {
		st := s.docs[d]
		if r, ok := results[d]; ok {
			st.lastAttempt, st.lastStatus = now, r.Status
			st.fetches[r.Status]++
		}
		st.body, st.parsed, st.version, st.have = nil, nil, -1, false
		st.lastSuccess, st.lastErr = time.Time{}, cause
	}
	s.publishLocked()
	s.gone = reason
	s.pending = false
	s.lastErr = cause
	// Ranger answered: not a reason to back off.
	s.breaker.succeed()
	s.mu.Unlock()
	s.cfg.Sink.Clear(reason)
	if s.cache != nil && first {
		if err := s.cache.remove(); err != nil {
			s.cfg.Log.Warn("ranger: could not remove the policy cache of the missing service", "cache-dir", s.cfg.CacheDir, "err", err)
		}
	}
	if first {
		s.cfg.Log.Error("ranger: service not found; every governed statement is denied until Ranger serves its policies again", "service", s.cfg.Client.cfg.ServiceName, "err", cause)
	}
}

func (s *AdminSource) logRound(results map[Document]FetchResult, installErr error, breakerState string, failures int, openUntil time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.cfg.Documents {
		r, ok := results[d]
		if !ok {
			continue
		}
		var msg string
		switch {
		case r.Outcome == Failed:
			msg = r.Err.Error()
		case r.Outcome == Updated && installErr != nil:
			msg = "rejected: " + installErr.Error()
		}
		prev := s.logged[d]
		switch {
		case msg != "" && msg != prev:
			s.cfg.Log.Error("ranger: download failed; the last good policies stay in force until policy.cache-ttl-secs passes, then governed statements are denied",
				"document", string(d), "url", r.URL, "status", r.Status, "err", msg)
		case msg == "" && prev != "":
			s.cfg.Log.Info("ranger: download works again", "document", string(d), "url", r.URL, "status", r.Status)
		}
		s.logged[d] = msg
		if r.Outcome == Updated && installErr == nil {
			s.cfg.Log.Info("ranger: downloaded", "document", string(d), "version", r.Version, "url", r.URL)
		}
	}
	if breakerState == BreakerOpen && failures == s.breaker.threshold {
		s.cfg.Log.Warn("ranger: circuit breaker open after repeated failures; backing off", "failures", failures, "next-attempt", openUntil.Format(time.RFC3339Nano))
	}
}

func (s *AdminSource) report(results map[Document]FetchResult) ranger.Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := ranger.Report{Source: "ranger", Versions: ranger.NoVersions(), Results: map[string]ranger.DocumentResult{}, Breaker: s.breaker.state(time.Now())}
	for _, d := range s.cfg.Documents {
		switch v := s.docs[d].version; d {
		case DocPolicies:
			rep.Versions.Policies = v
		case DocTags:
			rep.Versions.Tags = v
		case DocRoles:
			rep.Versions.Roles = v
		case DocUserStore:
			rep.Versions.UserStore = v
		}
		if r, ok := results[d]; ok {
			dr := ranger.DocumentResult{Status: r.Status, Outcome: r.Outcome.String()}
			if st := s.docs[d]; st.lastErr != nil {
				dr.Error = st.lastErr.Error()
				if r.Outcome == Updated {
					dr.Outcome = "rejected"
				}
			}
			rep.Results[string(d)] = dr
		}
	}
	if err := s.lastErrLocked(); err != nil {
		rep.Error = err.Error()
	}
	return rep
}

func setBundleDoc(b *ranger.Bundle, d Document, parsed any) {
	switch d {
	case DocPolicies:
		b.Policies, _ = parsed.(*ranger.ServicePolicies)
	case DocTags:
		b.Tags, _ = parsed.(*ranger.ServiceTags)
	case DocRoles:
		b.Roles, _ = parsed.(*ranger.RangerRoles)
	case DocUserStore:
		b.UserStore, _ = parsed.(*ranger.RangerUserStore)
	}
}

// SortedStatuses returns the keys of a fetch-count map in a stable order.
func SortedStatuses(m map[string]uint64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
