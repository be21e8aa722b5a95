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
