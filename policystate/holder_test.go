package policystate

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/filesource"
)

func TestPolicyHolderFailsClosed(t *testing.T) {
	last := time.Now()
	var srcErr error
	h := &Holder{ttl: time.Second, log: slog.New(slog.DiscardHandler)}
	h.SetSource(Source{LastSuccess: func() time.Time { return last }, Err: func() error { return srcErr }})

	// Nothing loaded: unavailable, with the source's error.
	srcErr = errors.New("policies could not be downloaded from Ranger Admin")
	if st := h.Snapshot(); st.Engine != nil || !strings.Contains(st.Unavailable, "no policy bundle has been loaded: policies could not be downloaded") {
		t.Errorf("nothing loaded: %+v", st)
	}
	srcErr = nil

	good := &ranger.Bundle{Policies: &ranger.ServicePolicies{ServiceName: "hive", PolicyVersion: 3}, Roles: &ranger.RangerRoles{RoleVersion: 9}}
	if err := h.Install(good); err != nil {
		t.Fatal(err)
	}
	st := h.Snapshot()
	if st.Engine == nil || st.Unavailable != "" {
		t.Fatalf("after install: %+v", st)
	}
	g1 := st.Generation
	if snap := h.Status(); !snap.Available || snap.Versions != (ranger.Versions{Policies: 3, Tags: -1, Roles: 9, UserStore: -1}) {
		t.Errorf("snapshot: %+v", snap)
	}

	// Stale past the TTL: the engine is kept but not trusted.
	last = time.Now().Add(-2 * time.Second)
	if st := h.Snapshot(); st.Engine == nil || !strings.Contains(st.Unavailable, "more than policy.cache-ttl-secs=1") {
		t.Errorf("stale: %+v", st)
	}
	last = time.Now()

	// A bundle the engine rejects: the engine in force ages from the
	// rejection even while the source keeps reporting success (the file
	// source sees the same rejected files as unchanged).
	bad := &ranger.Bundle{Policies: &ranger.ServicePolicies{PolicyVersion: 4, PolicyDeltas: []ranger.RangerPolicyDelta{{ID: 1}}}}
	if err := h.Install(bad); err == nil {
		t.Fatal("a delta bundle must be rejected")
	}
	if st := h.Snapshot(); st.Unavailable != "" || st.Generation != g1 {
		t.Errorf("right after a rejection the last good engine stays: %+v", st)
	}
	h.rejectedAt.Store(ptr(time.Now().Add(-2 * time.Second)))
	if st := h.Snapshot(); !strings.Contains(st.Unavailable, "more than policy.cache-ttl-secs") {
		t.Errorf("a rejection older than the TTL must deny although the source is fresh: %+v", st)
	}
	if err := h.Install(good); err != nil {
		t.Fatal(err)
	}
	if st := h.Snapshot(); st.Unavailable != "" || st.Generation == g1 {
		t.Errorf("an accepted bundle ends the rejection: %+v", st)
	}

	// Ranger says the service is gone: dropped at once, new generation.
	g2 := h.Snapshot().Generation
	h.Clear(`Ranger Admin reports that service "hive" does not exist`)
	st = h.Snapshot()
	if st.Engine != nil || !strings.Contains(st.Unavailable, "does not exist") || st.Generation == g2 {
		t.Errorf("cleared: %+v", st)
	}
	if snap := h.Status(); snap.Available || snap.Versions.Policies != -1 || !snap.LastSuccess.IsZero() {
		t.Errorf("snapshot after clear: %+v", snap)
	}
	h.Clear(`Ranger Admin reports that service "hive" does not exist`)
	if h.Snapshot().Generation != st.Generation {
		t.Error("clearing again with the same reason must not churn generations")
	}
	if err := h.Install(good); err != nil || h.Snapshot().Unavailable != "" {
		t.Errorf("service back: %v %+v", err, h.Snapshot())
	}
}

// The holder with a real file source, whose last success it reads
// lock-free: fresh after a check, denied once no check confirmed the
// files within the TTL, fresh again after the next check; a source that
// never loaded denies with its error.
func TestPolicyHolderFileSourceTTL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hive.json")
	h := New(policy.Options{}, 300*time.Millisecond, slog.New(slog.DiscardHandler))
	src, err := filesource.New(filesource.Config{Paths: ranger.FilePaths{Policies: path}, PollInterval: time.Hour, Sink: h})
	if err != nil {
		t.Fatal(err)
	}
	h.SetSource(Source{LastSuccess: src.LastSuccess, Err: src.Err})
	check := func() ranger.Report {
		t.Helper()
		rep, err := src.Refresh(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	if rep := check(); rep.Error == "" {
		t.Fatal("a missing file must fail the check")
	}
	if st := h.Snapshot(); st.Engine != nil || !strings.Contains(st.Unavailable, "no policy bundle has been loaded: ") || !strings.Contains(st.Unavailable, "hive.json") {
		t.Errorf("nothing loaded: %+v", st)
	}
	if err := os.WriteFile(path, []byte(`{"serviceName":"hive","policyVersion":7,"policies":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := check(); rep.Error != "" || rep.Versions.Policies != 7 {
		t.Fatalf("check: %+v", rep)
	}
	if st := h.Snapshot(); st.Engine == nil || st.Unavailable != "" {
		t.Fatalf("loaded: %+v", st)
	}
	if snap := h.Status(); !snap.LastSuccess.Equal(src.LastSuccess()) || snap.LastSuccess.IsZero() {
		t.Errorf("snapshot's last success %v, source's %v", snap.LastSuccess, src.LastSuccess())
	}
	time.Sleep(400 * time.Millisecond)
	if st := h.Snapshot(); st.Engine == nil || !strings.Contains(st.Unavailable, "more than policy.cache-ttl-secs=0") {
		t.Errorf("no check within the TTL must deny: %+v", st)
	}
	if rep := check(); rep.Error != "" {
		t.Fatalf("unchanged files: %+v", rep)
	}
	if st := h.Snapshot(); st.Engine == nil || st.Unavailable != "" {
		t.Errorf("a check that finds the files unchanged confirms them: %+v", st)
	}
	// Files that stop parsing: the source's last success stops, and the
	// engine in force ages out of the TTL from it.
	before := src.LastSuccess()
	if err := os.WriteFile(path, []byte(`{not json`), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, time.Now().Add(time.Second), time.Now().Add(time.Second))
	if rep := check(); rep.Error == "" {
		t.Fatal("unparsable files must fail the check")
	}
	if !src.LastSuccess().Equal(before) {
		t.Errorf("a failed check moved the last success: %v → %v", before, src.LastSuccess())
	}
	time.Sleep(400 * time.Millisecond)
	if st := h.Snapshot(); !strings.Contains(st.Unavailable, "more than policy.cache-ttl-secs") {
		t.Errorf("failing checks past the TTL must deny: %+v", st)
	}
}

func ptr[T any](v T) *T { return &v }

func TestInForceAndBundle(t *testing.T) {
	h := New(policy.Options{}, time.Minute, slog.New(slog.DiscardHandler))
	last := time.Now()
	h.SetSource(Source{LastSuccess: func() time.Time { return last }, Err: func() error { return nil }})
	if eng, b, why := h.InForce(); eng != nil || b != nil || why != "no policy bundle has been loaded" || h.Bundle() != nil {
		t.Fatalf("before a load: %v %v %q", eng, b, why)
	}
	b := &ranger.Bundle{Policies: &ranger.ServicePolicies{ServiceName: "hive", PolicyVersion: 3}}
	if err := h.Install(b); err != nil {
		t.Fatal(err)
	}
	if eng, got, why := h.InForce(); eng == nil || got != b || why != "" {
		t.Fatalf("after a load: %v %v %q", eng, got, why)
	}
	last = time.Now().Add(-2 * time.Minute)
	if eng, _, why := h.InForce(); eng != nil || !strings.HasPrefix(why, "the last successful policy load was") {
		t.Errorf("stale: %v %q", eng, why)
	}
	if h.Bundle() != b {
		t.Error("Bundle reports the bundle in force, stale or not")
	}
}
