package metrics

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgranger/pgranger/ranger/rangeradmin"
)

// Every metric this package defines has a distinct pgranger_ name, so the
// admin endpoint can register both collectors on one registry.
func TestMetricNames(t *testing.T) {
	descs := make(chan *prometheus.Desc, 100)
	NewPolicyCollector(func() PolicyStatus { return PolicyStatus{} }, func() rangeradmin.SourceStatus { return rangeradmin.SourceStatus{} }).Describe(descs)
	(&ProxyCollector{Backend: func(context.Context) error { return nil }}).Describe(descs)
	close(descs)
	name := regexp.MustCompile(`fqName: "([^"]+)"`)
	seen := map[string]bool{}
	for d := range descs {
		m := name.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		if seen[m[1]] || !regexp.MustCompile(`^pgranger_[a-z_]+$`).MatchString(m[1]) {
			t.Errorf("metric %q: duplicate or not a pgranger_ name", m[1])
		}
		seen[m[1]] = true
	}
	if len(seen) < 30 {
		t.Errorf("only %d metrics described", len(seen))
	}
}

func TestReloadCounters(t *testing.T) {
	var r ReloadCounters
	r.Failed()
	r.Succeeded(time.Unix(1700000000, 0))
	r.Succeeded(time.Unix(1700000060, 0))
	if r.ok.Load() != 2 || r.failed.Load() != 1 || r.lastSuccess.Load() != 1700000060 {
		t.Errorf("ok %d failed %d last %d", r.ok.Load(), r.failed.Load(), r.lastSuccess.Load())
	}
}

// A policy's validity end is a gauge of the seconds left, labelled with
// its id and name.
func TestValidityRemaining(t *testing.T) {
	end := time.Now().Add(3 * 24 * time.Hour)
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewPolicyCollector(func() PolicyStatus {
		return PolicyStatus{Ends: []PolicyEnd{{ID: 7, Name: "contractors until March", End: end}}}
	}, nil))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "pgranger_policy_validity_remaining_seconds" {
			continue
		}
		m := mf.GetMetric()[0]
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		v := m.GetGauge().GetValue()
		if labels["policy_id"] != "7" || labels["policy_name"] != "contractors until March" || v < 3*86400-60 || v > 3*86400 {
			t.Errorf("%v = %v", labels, v)
		}
		return
	}
	t.Fatal("no pgranger_policy_validity_remaining_seconds")
}
