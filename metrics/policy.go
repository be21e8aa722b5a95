// Package metrics owns pgranger's Prometheus metric names and the
// collectors that export them: the policy source's (policy.go, served by
// every admin endpoint) and the proxy's (proxy.go: connections,
// statements, rewrite caches, pool, audit, reloads, backend). Every value
// is read at scrape time from the component that owns it, so a scrape
// cannot disagree with what queries see; the collectors keep no state.
package metrics

import (
	"math"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgranger/pgranger/ranger/rangeradmin"
)

// The metrics of the policy source. Values are read at scrape time from
// the holder and the source, so they can never disagree with what queries
// see.
var (
	descAvailable = prometheus.NewDesc("pgranger_policy_available",
		"1 when a policy bundle is in force and younger than policy.cache-ttl-secs; 0 when every governed statement is denied (never loaded, stale, or the Ranger service is gone).",
		[]string{"source"}, nil)
	descPolicyVersion = prometheus.NewDesc("pgranger_policy_version",
		"policyVersion of the ServicePolicies in force (-1: none).", nil, nil)
	descTagVersion = prometheus.NewDesc("pgranger_tag_version",
		"tagVersion of the ServiceTags in force (-1: none).", nil, nil)
	descRoleVersion = prometheus.NewDesc("pgranger_role_version",
		"roleVersion of the RangerRoles in force (-1: none).", nil, nil)
	descUserStoreVersion = prometheus.NewDesc("pgranger_userstore_version",
		"userStoreVersion of the RangerUserStore in force (-1: none).", nil, nil)
	descGeneration = prometheus.NewDesc("pgranger_policy_generation",
		"Increases with every bundle installed or dropped; cached rewrites and prepared statements of older generations are not used.", nil, nil)
	descAge = prometheus.NewDesc("pgranger_policy_age_seconds",
		"Seconds since the source last confirmed the policies in force (Ranger: the oldest document's last 200 or 304); statements are denied once it exceeds pgranger_policy_cache_ttl_seconds. +Inf when none are in force.", nil, nil)
	descTTL = prometheus.NewDesc("pgranger_policy_cache_ttl_seconds",
		"policy.cache-ttl-secs: the age past which policies are not trusted.", nil, nil)
	descValidity = prometheus.NewDesc("pgranger_policy_validity_remaining_seconds",
		"Seconds until a policy in force stops applying for good: the latest end of its validity schedules (negative once it has ended). Only policies whose every schedule has an end.",
		[]string{"policy_id", "policy_name"}, nil)

	descFetches = prometheus.NewDesc("pgranger_ranger_fetches_total",
		"Downloads from Ranger Admin by document and result: the HTTP status (200, 304, 401, 404, …), transport_error, invalid_document or password_error.",
		[]string{"document", "status"}, nil)
	descLastFetch = prometheus.NewDesc("pgranger_ranger_last_fetch",
		"Result of the last download of each document (always 1; the status label carries the result, as in pgranger_ranger_fetches_total, or cache after a start from the disk cache).",
		[]string{"document", "status"}, nil)
	descLastSuccess = prometheus.NewDesc("pgranger_ranger_last_success_timestamp_seconds",
		"Unix time Ranger Admin last delivered (200) or confirmed (304) each document; 0 when never.",
		[]string{"document"}, nil)
	descDocVersion = prometheus.NewDesc("pgranger_ranger_document_version",
		"Version of each document pgranger holds from Ranger Admin (-1: none).",
		[]string{"document"}, nil)
	descBreaker = prometheus.NewDesc("pgranger_ranger_breaker_state",
		"Circuit breaker of the Ranger Admin client: 1 for the current state (closed: polling normally; open: backing off after repeated failures; half-open: the next round is a probe).",
		[]string{"state"}, nil)
	descFailures = prometheus.NewDesc("pgranger_ranger_consecutive_failures",
		"Ranger refresh rounds that failed in a row (0 after a success).", nil, nil)
	descServiceMissing = prometheus.NewDesc("pgranger_ranger_service_missing",
		"1 when Ranger Admin answered 404 RANGER_ERROR_SERVICE_NOT_FOUND for policy.service-name (its policies were dropped).", nil, nil)
)

// PolicyStatus is the state of the policies in force.
type PolicyStatus struct {
	Source     string // "file" or "ranger"
	Available  bool   // loaded and younger than the TTL
	Reason     string // why not available
	Generation uint64
	// Versions of the documents in force (-1 = none).
	PolicyVersion, TagVersion, RoleVersion, UserStoreVersion int64
	LastSuccess                                              time.Time // when the source last confirmed them (zero = none in force)
	TTL                                                      time.Duration
	// Ends are the policies in force (resource and tag policies) whose
	// validity schedules all end, with the latest end.
	Ends []PolicyEnd
}

// PolicyEnd is when one policy stops applying.
type PolicyEnd struct {
	ID   int64
	Name string
	End  time.Time
}

// NewPolicyCollector exports the policies in force (policy) and, when
// ranger is not nil, the Ranger Admin source's downloads and breaker.
func NewPolicyCollector(policy func() PolicyStatus, ranger func() rangeradmin.SourceStatus) prometheus.Collector {
	return &policyCollector{policy: policy, ranger: ranger}
}

type policyCollector struct {
	policy func() PolicyStatus
	ranger func() rangeradmin.SourceStatus
}

func (c *policyCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descAvailable, descPolicyVersion, descTagVersion, descRoleVersion, descUserStoreVersion,
		descGeneration, descAge, descTTL, descValidity} {
		ch <- d
	}
	if c.ranger != nil {
		for _, d := range []*prometheus.Desc{descFetches, descLastFetch, descLastSuccess, descDocVersion, descBreaker, descFailures, descServiceMissing} {
			ch <- d
		}
	}
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func (c *policyCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.policy()
	avail := 0.0
	if p.Available {
		avail = 1
	}
	age := math.Inf(1)
	if !p.LastSuccess.IsZero() {
		age = time.Since(p.LastSuccess).Seconds()
	}
	ch <- gauge(descAvailable, avail, p.Source)
	ch <- gauge(descPolicyVersion, float64(p.PolicyVersion))
	ch <- gauge(descTagVersion, float64(p.TagVersion))
	ch <- gauge(descRoleVersion, float64(p.RoleVersion))
	ch <- gauge(descUserStoreVersion, float64(p.UserStoreVersion))
	ch <- gauge(descGeneration, float64(p.Generation))
	ch <- gauge(descAge, age)
	ch <- gauge(descTTL, p.TTL.Seconds())
	now := time.Now()
	for _, e := range p.Ends {
		ch <- gauge(descValidity, e.End.Sub(now).Seconds(), strconv.FormatInt(e.ID, 10), e.Name)
	}
	if c.ranger == nil {
		return
	}
	r := c.ranger()
	for _, d := range r.Documents {
		doc := string(d.Document)
		for _, status := range rangeradmin.SortedStatuses(d.Fetches) {
			ch <- prometheus.MustNewConstMetric(descFetches, prometheus.CounterValue, float64(d.Fetches[status]), doc, status)
		}
		if d.LastStatus != "" {
			ch <- gauge(descLastFetch, 1, doc, d.LastStatus)
		}
		ts := 0.0
		if !d.LastSuccess.IsZero() {
			ts = float64(d.LastSuccess.UnixNano()) / 1e9
		}
		ch <- gauge(descLastSuccess, ts, doc)
		ch <- gauge(descDocVersion, float64(d.Version), doc)
	}
	for _, s := range []string{rangeradmin.BreakerClosed, rangeradmin.BreakerOpen, rangeradmin.BreakerHalfOpen} {
		v := 0.0
		if r.Breaker.State == s {
			v = 1
		}
		ch <- gauge(descBreaker, v, s)
	}
	ch <- gauge(descFailures, float64(r.Breaker.ConsecutiveFailures))
	missing := 0.0
	if r.ServiceGone {
		missing = 1
	}
	ch <- gauge(descServiceMissing, missing)
}
