package policystate

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

func TestPolicyHolderFailsClosed(t *testing.T) {
	last := time.Now()
	var srcErr error
	h := &Holder{ttl: time.Second, log: slog.New(slog.DiscardHandler),
		status: func() (time.Time, error) { return last, srcErr }}

	// Nothing loaded: unavailable, with the source's error.
	srcErr = errors.New("policies could not be downloaded from Ranger Admin")
	if st := h.PolicyState(); st.Engine != nil || !strings.Contains(st.Unavailable, "no policy bundle has been loaded: policies could not be downloaded") {
		t.Errorf("nothing loaded: %+v", st)
	}
	srcErr = nil

	good := &ranger.Bundle{Policies: &ranger.ServicePolicies{ServiceName: "hive", PolicyVersion: 3}, Roles: &ranger.RangerRoles{RoleVersion: 9}}
	if err := h.Install(good); err != nil {
		t.Fatal(err)
	}
	st := h.PolicyState()
	if st.Engine == nil || st.Unavailable != "" {
		t.Fatalf("after install: %+v", st)
	}
	g1 := st.Generation
	if snap := h.Snapshot(); !snap.Available || snap.Versions != (Versions{3, -1, 9, -1}) {
		t.Errorf("snapshot: %+v", snap)
	}

	// Stale past the TTL: the engine is kept but not trusted.
	last = time.Now().Add(-2 * time.Second)
	if st := h.PolicyState(); st.Engine == nil || !strings.Contains(st.Unavailable, "more than policy.cache-ttl-secs=1") {
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
	if st := h.PolicyState(); st.Unavailable != "" || st.Generation != g1 {
		t.Errorf("right after a rejection the last good engine stays: %+v", st)
	}
	h.rejectedAt.Store(ptr(time.Now().Add(-2 * time.Second)))
	if st := h.PolicyState(); !strings.Contains(st.Unavailable, "more than policy.cache-ttl-secs") {
		t.Errorf("a rejection older than the TTL must deny although the source is fresh: %+v", st)
	}
	if err := h.Install(good); err != nil {
		t.Fatal(err)
	}
	if st := h.PolicyState(); st.Unavailable != "" || st.Generation == g1 {
		t.Errorf("an accepted bundle ends the rejection: %+v", st)
	}

	// Ranger says the service is gone: dropped at once, new generation.
	g2 := h.PolicyState().Generation
	h.Clear(`Ranger Admin reports that service "hive" does not exist`)
	st = h.PolicyState()
	if st.Engine != nil || !strings.Contains(st.Unavailable, "does not exist") || st.Generation == g2 {
		t.Errorf("cleared: %+v", st)
	}
	if snap := h.Snapshot(); snap.Available || snap.Versions.Policy != -1 || !snap.LastSuccess.IsZero() {
		t.Errorf("snapshot after clear: %+v", snap)
	}
	h.Clear(`Ranger Admin reports that service "hive" does not exist`)
	if h.PolicyState().Generation != st.Generation {
		t.Error("clearing again with the same reason must not churn generations")
	}
	if err := h.Install(good); err != nil || h.PolicyState().Unavailable != "" {
		t.Errorf("service back: %v %+v", err, h.PolicyState())
	}
}

func ptr[T any](v T) *T { return &v }
