package rangeradmin_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
	"github.com/pgranger/pgranger/ranger/rangertest"
)

// sink records what a source hands to its policy holder.
type sink struct {
	mu      sync.Mutex
	bundles []*ranger.Bundle
	cleared []string
	reject  error
}

func (k *sink) Install(b *ranger.Bundle) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.reject != nil {
		return k.reject
	}
	k.bundles = append(k.bundles, b)
	return nil
}

func (k *sink) Clear(reason string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.cleared = append(k.cleared, reason)
}

func (k *sink) last() *ranger.Bundle {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.bundles) == 0 {
		return nil
	}
	return k.bundles[len(k.bundles)-1]
}

func (k *sink) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.bundles)
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type fixture struct {
	srv  *rangertest.Server
	src  *rangeradmin.AdminSource
	sink *sink
	log  *lockedBuf
}

func newSource(t *testing.T, srv *rangertest.Server, mod func(*rangeradmin.AdminSourceConfig)) *fixture {
	t.Helper()
	f := &fixture{srv: srv, sink: &sink{}, log: &lockedBuf{}}
	cfg := rangeradmin.AdminSourceConfig{
		Client:            newClient(t, func(c *rangeradmin.AdminClientConfig) { c.Timeout = 500 * time.Millisecond }, srv.URL()),
		Documents:         rangeradmin.AllDocuments,
		PollInterval:      50 * time.Millisecond,
		BreakerFailures:   2,
		BreakerMaxBackoff: 400 * time.Millisecond,
		Log:               slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Sink:              f.sink,
	}
	if mod != nil {
		mod(&cfg)
	}
	src, err := rangeradmin.NewAdminSource(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.src = src
	t.Cleanup(func() {
		if strings.Contains(f.log.String(), password) {
			t.Errorf("the log contains the password:\n%s", f.log.String())
		}
	})
	return f
}

func (f *fixture) refresh(t *testing.T) ranger.Report {
	t.Helper()
	rep, err := f.src.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f.sameFreshness(t)
	return rep
}

// sameFreshness: the lock-free LastSuccess, which every statement reads,
// is the time Status reports under the source's lock.
func (f *fixture) sameFreshness(t *testing.T) {
	t.Helper()
	if last, _ := f.src.Status(); !f.src.LastSuccess().Equal(last) {
		t.Errorf("LastSuccess %v, Status %v", f.src.LastSuccess(), last)
	}
}

func TestSourceRoundsVersionsAndFreshness(t *testing.T) {
	f := newSource(t, newServer(t), nil)
	if last, _ := f.src.Status(); !last.IsZero() {
		t.Fatal("fresh before any download")
	}
	rep := f.refresh(t)
	b := f.sink.last()
	if b == nil || b.Policies.PolicyVersion != 7 || b.Tags.TagVersion != 3 || b.Roles.RoleVersion != 4 || b.UserStore.UserStoreVersion != 5 {
		t.Fatalf("first round: %+v %+v", b, rep)
	}
	if rep.Error != "" || rep.Versions.Policies != 7 || rep.Results["roles"].Status != "200" || rep.Breaker != rangeradmin.BreakerClosed {
		t.Errorf("report: %+v", rep)
	}
	first, err := f.src.Status()
	if first.IsZero() || err != nil {
		t.Fatalf("status after a good round: %v %v", first, err)
	}

	// Nothing changed: every document answers 304, nothing is installed,
	// and freshness advances.
	time.Sleep(5 * time.Millisecond)
	rep = f.refresh(t)
	if f.sink.count() != 1 || rep.Results["policies"].Status != "304" {
		t.Errorf("unchanged round installed again or did not 304: %d %+v", f.sink.count(), rep)
	}
	if q := f.srv.LastQuery(rangeradmin.DocRoles); q.Get("lastKnownRoleVersion") != "4" || q.Get("lastActivationTime") == "0" {
		t.Errorf("second round must send the versions it has and the activation time: %v", q)
	}
	if again, _ := f.src.Status(); !again.After(first) {
		t.Error("a 304 must renew freshness")
	}

	// A new version of one document installs a bundle with the others kept.
	if _, err := f.srv.Bump(rangeradmin.DocRoles); err != nil {
		t.Fatal(err)
	}
	rep = f.refresh(t)
	if b := f.sink.last(); f.sink.count() != 2 || b.Roles.RoleVersion != 5 || b.Policies.PolicyVersion != 7 || b.Tags == nil {
		t.Errorf("roles bump: %d bundles, %+v", f.sink.count(), rep)
	}
	snap := f.src.Snapshot()
	if snap.ServiceName != svc || len(snap.Documents) != 4 || snap.Documents[2].Version != 5 || snap.Documents[0].Fetches["200"] != 1 || snap.Documents[0].Fetches["304"] != 2 {
		t.Errorf("snapshot: %+v", snap)
	}
}

func TestSourceFailureKeepsLastGoodAndBreaker(t *testing.T) {
	srv := newServer(t)
	f := newSource(t, srv, nil)
	f.refresh(t)
	good, _ := f.src.Status()

	srv.SetCredentials(user, "changed-by-someone")
	rep := f.refresh(t)
	last, err := f.src.Status()
	if !last.Equal(good) || err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a failed round must not renew freshness and must report: %v %v", last, err)
	}
	if rep.Results["policies"].Status != "401" || rep.Breaker != rangeradmin.BreakerClosed || f.sink.count() != 1 {
		t.Errorf("first failure: %+v", rep)
	}
	if !strings.Contains(f.log.String(), "download failed") || !strings.Contains(f.log.String(), "Authentication Failed") {
		t.Errorf("the failure and Ranger's message must be logged:\n%s", f.log.String())
	}
	rep = f.refresh(t)
	if rep.Breaker != rangeradmin.BreakerOpen {
		t.Errorf("breaker after 2 failures: %s", rep.Breaker)
	}
	snap := f.src.Snapshot()
	if snap.Breaker.ConsecutiveFailures != 2 || !snap.Breaker.OpenUntil.After(time.Now()) {
		t.Errorf("breaker: %+v", snap.Breaker)
	}
	// Backoff doubles and is capped.
	f.refresh(t)
	f.refresh(t)
	if wait := time.Until(f.src.Snapshot().Breaker.OpenUntil); wait > 400*time.Millisecond {
		t.Errorf("backoff beyond breaker-max-backoff: %s", wait)
	}
	// A success closes it.
	srv.SetCredentials(user, password)
	if rep := f.refresh(t); rep.Breaker != rangeradmin.BreakerClosed || rep.Error != "" {
		t.Errorf("after recovery: %+v", rep)
	}
	if now, err := f.src.Status(); !now.After(good) || err != nil {
		t.Errorf("recovered freshness: %v %v", now, err)
	}
	if !strings.Contains(f.log.String(), "download works again") {
		t.Error("recovery must be logged")
	}
}

func TestSourceRunHonoursBreakerBackoff(t *testing.T) {
	srv := newServer(t)
	f := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) {
		c.PollInterval = 20 * time.Millisecond
		c.BreakerMaxBackoff = 2 * time.Second
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv.FailAll(500, "down")
	f.src.Start(ctx)
	time.Sleep(700 * time.Millisecond)
	// Closed: every 20 ms; after 2 failures the waits are 40, 80, 160,
	// 320 ms… so 700 ms holds at most ~7 rounds, not ~35.
	n := srv.Requests(rangeradmin.DocPolicies)
	if n < 3 || n > 9 {
		t.Errorf("%d rounds in 700 ms with the breaker open", n)
	}
	if f.src.Snapshot().Breaker.State == rangeradmin.BreakerClosed {
		t.Error("breaker closed while failing")
	}
	// An explicit refresh goes through the open breaker and closes it.
	srv.FailAll(0, "")
	if rep := f.refresh(t); rep.Breaker != rangeradmin.BreakerClosed {
		t.Errorf("refresh through an open breaker: %+v", rep)
	}
}

func TestSourceRunPicksUpNewVersionWithinInterval(t *testing.T) {
	srv := newServer(t)
	f := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) { c.PollInterval = 100 * time.Millisecond })
	f.refresh(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.src.Start(ctx)
	srv.SetDocument(rangeradmin.DocPolicies, policiesDoc(8))
	start := time.Now()
	for f.sink.last().Policies.PolicyVersion != 8 {
		if time.Since(start) > 150*time.Millisecond {
			t.Fatal("version 8 not installed within one poll interval")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSourceServiceNotFoundClears(t *testing.T) {
	srv := newServer(t)
	dir := t.TempDir()
	f := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) { c.CacheDir = dir })
	f.refresh(t)
	if _, err := os.Stat(filepath.Join(dir, svc+".state.json")); err != nil {
		t.Fatal("no cache written:", err)
	}
	srv.ServiceGone(true)
	rep := f.refresh(t)
	if len(f.sink.cleared) != 1 || !strings.Contains(f.sink.cleared[0], "does not exist") {
		t.Fatalf("404 must clear the policies: %v %+v", f.sink.cleared, rep)
	}
	if rep.Versions.Policies != -1 || rep.Results["policies"].Outcome != "service_not_found" || rep.Breaker != rangeradmin.BreakerClosed {
		t.Errorf("report: %+v", rep)
	}
	if last, err := f.src.Status(); !last.IsZero() || err == nil {
		t.Errorf("status after 404: %v %v", last, err)
	}
	if _, err := os.Stat(filepath.Join(dir, svc+".state.json")); !os.IsNotExist(err) {
		t.Error("the cache of a deleted service must be removed, so a restart does not serve it")
	}
	srv.ServiceGone(false)
	f.refresh(t)
	if b := f.sink.last(); f.sink.count() != 2 || b.Policies.PolicyVersion != 7 {
		t.Errorf("service back: %d bundles", f.sink.count())
	}
	if q := srv.LastQuery(rangeradmin.DocPolicies); q.Get("lastKnownVersion") != "-1" {
		t.Errorf("after a 404 the versions start over: %v", q)
	}
	if _, err := f.src.Status(); err != nil {
		t.Errorf("status after the service came back: %v", err)
	}
}

func TestSourceRejectedBundleIsNotKept(t *testing.T) {
	srv := newServer(t)
	dir := t.TempDir()
	f := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) { c.CacheDir = dir })
	f.refresh(t)
	good, _ := f.src.Status()
	srv.SetDocument(rangeradmin.DocPolicies, policiesDoc(8))
	f.sink.reject = errors.New("engine says no")
	rep := f.refresh(t)
	if rep.Results["policies"].Outcome != "rejected" || rep.Versions.Policies != 7 {
		t.Errorf("rejected bundle: %+v", rep)
	}
	if last, err := f.src.Status(); !last.Equal(good) || err == nil {
		t.Errorf("a rejected download must not renew freshness: %v %v", last, err)
	}
	f.refresh(t)
	if q := srv.LastQuery(rangeradmin.DocPolicies); q.Get("lastKnownVersion") != "7" {
		t.Errorf("a rejected version is downloaded again: %v", q)
	}
	state, _ := os.ReadFile(filepath.Join(dir, svc+".state.json"))
	if !strings.Contains(string(state), `"version": 7`) {
		t.Errorf("a rejected bundle must not reach the cache:\n%s", state)
	}
	// Ranger confirming the version in force (a 304) makes it fresh again.
	srv.SetDocument(rangeradmin.DocPolicies, policiesDoc(7))
	if rep := f.refresh(t); rep.Error != "" || rep.Results["policies"].Status != "304" {
		t.Errorf("304 to the version in force: %+v", rep)
	}
	if last, err := f.src.Status(); !last.After(good) || err != nil {
		t.Errorf("a 304 to the version in force must renew freshness: %v %v", last, err)
	}
	srv.SetDocument(rangeradmin.DocPolicies, policiesDoc(8))
	f.sink.reject = nil
	f.refresh(t)
	if f.sink.last().Policies.PolicyVersion != 8 {
		t.Error("accepted after the engine accepts")
	}
}

func TestSourceOptionalDocumentsAndIncompleteBundles(t *testing.T) {
	srv := newServer(t)
	// A service without a tag service: Ranger says "nothing newer" to -1.
	srv.Fail(rangeradmin.DocTags, 304, "")
	srv.Fail(rangeradmin.DocRoles, 500, "roles broken")
	f := newSource(t, srv, nil)
	rep := f.refresh(t)
	if f.sink.count() != 0 || rep.Error == "" {
		t.Fatalf("a bundle without its roles must not be installed: %+v", rep)
	}
	if last, _ := f.src.Status(); !last.IsZero() {
		t.Error("incomplete bundle counted as fresh")
	}
	srv.Fail(rangeradmin.DocRoles, 0, "")
	f.refresh(t)
	b := f.sink.last()
	if b == nil || b.Tags != nil || b.Roles == nil || b.Policies.PolicyVersion != 7 {
		t.Fatalf("complete bundle: %+v", b)
	}
	// Policies answered 304 before any were downloaded is a failure.
	srv2 := newServer(t)
	srv2.Fail(rangeradmin.DocPolicies, 304, "")
	f2 := newSource(t, srv2, func(c *rangeradmin.AdminSourceConfig) { c.Documents = nil })
	if rep := f2.refresh(t); f2.sink.count() != 0 || !strings.Contains(rep.Error, "no policies yet") {
		t.Errorf("304 without policies: %+v", rep)
	}
	if docs := f2.src.Documents(); len(docs) != 1 || docs[0] != rangeradmin.DocPolicies {
		t.Errorf("documents: %v", docs)
	}
	if srv2.Requests(rangeradmin.DocTags) != 0 {
		t.Error("a disabled document was downloaded")
	}
}

func TestSourceDiskCache(t *testing.T) {
	srv := newServer(t)
	dir := filepath.Join(t.TempDir(), "cache")
	f := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) { c.CacheDir = dir })
	f.refresh(t)
	confirmed, _ := f.src.Status()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if st, _ := os.Stat(filepath.Join(dir, e.Name())); st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", e.Name(), st.Mode().Perm())
		}
	}
	if strings.Join(names, " ") != "cm_hive.policies.json cm_hive.roles.json cm_hive.state.json cm_hive.tags.json cm_hive.userstore.json" {
		t.Errorf("cache files (no temporary files left): %v", names)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("cache dir mode %v", st.Mode().Perm())
	}

	// A restart while Ranger is down: the cache is installed with the time
	// Ranger last confirmed it, not the time it was read.
	srv.Stop()
	time.Sleep(20 * time.Millisecond)
	g := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) { c.CacheDir = dir })
	ok, err := g.src.LoadCache()
	if !ok || err != nil {
		t.Fatalf("LoadCache: %v %v", ok, err)
	}
	b := g.sink.last()
	if b.Policies.PolicyVersion != 7 || b.Tags.TagVersion != 3 || b.Roles.RoleVersion != 4 || b.UserStore.UserStoreVersion != 5 {
		t.Errorf("cached bundle: %+v", b)
	}
	if last, _ := g.src.Status(); !last.Equal(confirmed) {
		t.Errorf("cache freshness %v, want the original confirmation %v", last, confirmed)
	}
	g.sameFreshness(t)
	rep := g.refresh(t)
	if rep.Error == "" || g.sink.count() != 1 {
		t.Errorf("Ranger down after a cached start: %+v", rep)
	}
	if last, _ := g.src.Status(); !last.Equal(confirmed) {
		t.Error("a failed round after a cached start must not renew freshness")
	}
	// Ranger back: the cached versions are confirmed with 304s.
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	before := srv.Requests(rangeradmin.DocPolicies)
	rep = g.refresh(t)
	if rep.Results["policies"].Status != "304" || srv.Requests(rangeradmin.DocPolicies) != before+1 || g.sink.count() != 1 {
		t.Errorf("after Ranger returns: %+v", rep)
	}

	// A cache claiming a confirmation in the future is not used (it would
	// stretch the TTL).
	statePath := filepath.Join(dir, "cm_hive.state.json")
	state, _ := os.ReadFile(statePath)
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	os.WriteFile(statePath, []byte(regexpConfirmed.ReplaceAllString(string(state), `"confirmedAt": "`+future+`"`)), 0o600)
	fut := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) { c.CacheDir = dir })
	if ok, err := fut.src.LoadCache(); ok || err == nil || !strings.Contains(err.Error(), "not plausible") {
		t.Errorf("future confirmation: %v %v", ok, err)
	}
	os.WriteFile(statePath, state, 0o600)

	// A damaged cache is not used.
	os.WriteFile(filepath.Join(dir, "cm_hive.policies.json"), policiesDoc(99), 0o600)
	h := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) { c.CacheDir = dir })
	if ok, err := h.src.LoadCache(); ok || err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("damaged cache: %v %v", ok, err)
	}
	// A cache written with fewer documents is not used either.
	os.RemoveAll(dir)
	k := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) { c.CacheDir = dir; c.Documents = nil })
	k.refresh(t)
	m := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) { c.CacheDir = dir })
	if ok, err := m.src.LoadCache(); ok || err == nil || !strings.Contains(err.Error(), "has no tags") {
		t.Errorf("cache without tags: %v %v", ok, err)
	}
	// No cache at all is not an error.
	n := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) { c.CacheDir = t.TempDir() })
	if ok, err := n.src.LoadCache(); ok || err != nil {
		t.Errorf("empty cache dir: %v %v", ok, err)
	}
}

func TestSourceRefreshHonoursContext(t *testing.T) {
	srv := newServer(t)
	f := newSource(t, srv, nil)
	srv.Hang()
	defer srv.Release()
	go f.src.Refresh(context.Background()) // holds the round
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := f.src.Refresh(ctx); err == nil || time.Since(start) > 400*time.Millisecond {
		t.Errorf("refresh waiting for a hung round: %v after %s", err, time.Since(start))
	}
}

var regexpConfirmed = regexp.MustCompile(`"confirmedAt": "[^"]*"`)

// Start installs before it returns and then polls; Err tells SQL clients
// only that Ranger is the problem, Status has the details; Reload fails
// when the round did not get everything.
func TestSourceStartReloadAndErr(t *testing.T) {
	srv := newServer(t)
	f := newSource(t, srv, func(c *rangeradmin.AdminSourceConfig) { c.PollInterval = time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.src.Start(ctx)
	if f.sink.count() != 1 || f.src.Err() != nil || f.src.LastSuccess().IsZero() || !f.src.AgesRejections() {
		t.Fatalf("after Start: %d bundles, %v", f.sink.count(), f.src.Err())
	}
	srv.SetDocument(rangeradmin.DocPolicies, policiesDoc(8))
	if err := f.src.Reload(ctx); err != nil || f.sink.last().Policies.PolicyVersion != 8 {
		t.Errorf("reload: %v", err)
	}
	srv.FailAll(500, "down")
	err := f.src.Reload(ctx)
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("reload with Ranger failing: %v", err)
	}
	if got := f.src.Err(); got == nil || strings.Contains(got.Error(), srv.URL()) || !strings.Contains(got.Error(), "could not be downloaded from Ranger Admin") {
		t.Errorf("Err: %v", got)
	}
	if _, detail := f.src.Status(); detail == nil || !strings.Contains(detail.Error(), "500") {
		t.Errorf("Status: %v", detail)
	}
}
