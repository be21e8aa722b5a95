package metrics

import (
	"context"
	"runtime"
	"sort"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgranger/pgranger/audit"
	"github.com/pgranger/pgranger/pgwire"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// ProxyCollector exports the wire side (pgwire.Server.Stats), the rewrite
// caches, the audit logger and configuration reloads. Values are read at
// scrape time; the collector keeps no state of its own.
type ProxyCollector struct {
	Version  string // the binary's, for pgranger_build_info
	Server   *pgwire.Server
	Rewriter *sqlrewrite.Rewriter
	Audit    *audit.Logger
	Reloads  *ReloadCounters
	Backend  func(context.Context) error // nil: no readiness probe
}

// ReloadCounters count SIGHUP reloads.
type ReloadCounters struct {
	ok, failed  atomic.Int64
	lastSuccess atomic.Int64 // unix seconds
}

// Succeeded counts a reload that applied, at now.
func (r *ReloadCounters) Succeeded(now time.Time) {
	r.ok.Add(1)
	r.lastSuccess.Store(now.Unix())
}

// Failed counts a reload that left the running configuration.
func (r *ReloadCounters) Failed() { r.failed.Add(1) }

var (
	descBuild = prometheus.NewDesc("pgranger_build_info",
		"Always 1; the labels carry the version and the Go version of the running binary.", []string{"version", "goversion"}, nil)
	descConnActive = prometheus.NewDesc("pgranger_connections_active",
		"Client connections open now, in startup or in a session.", nil, nil)
	descConnTotal = prometheus.NewDesc("pgranger_connections_total",
		"Client connections accepted (cancel requests included).", nil, nil)
	descConnRejected = prometheus.NewDesc("pgranger_connections_rejected_total",
		"Client connections refused before a session began, by reason: max_clients (listen.max-clients), auth (password or token), tls, protocol, backend (unreachable or refusing), pool_exhausted (no backend connection within backend.acquire-timeout-secs), other.",
		[]string{"reason"}, nil)
	descStatements = prometheus.NewDesc("pgranger_statements_total",
		"Statements by kind (SELECT, INSERT, SET, …; UNKNOWN when unparsable) and result: ok (allowed and completed), error (allowed, the backend answered with an error), denied (refused by pgranger).",
		[]string{"kind", "result"}, nil)
	descRewrite = prometheus.NewDesc("pgranger_rewrite_duration_seconds",
		"Time to check and rewrite one SQL text, from a cache hit (about a microsecond) to a full parse and rewrite.", nil, nil)
	descCacheHits = prometheus.NewDesc("pgranger_rewrite_cache_hits_total",
		"Rewrite cache lookups that found an entry: cache=statement (exact text, identity, policy generation, catalog version), cache=template (the same text with other literals).",
		[]string{"cache"}, nil)
	descCacheMisses = prometheus.NewDesc("pgranger_rewrite_cache_misses_total",
		"Rewrite cache lookups that found nothing (a statement miss asks the template cache; a template miss parses).",
		[]string{"cache"}, nil)
	descPoolConns = prometheus.NewDesc("pgranger_pool_connections",
		"Backend connections per database by state: in_use (held by a session) or idle (pooled, reset with DISCARD ALL).",
		[]string{"database", "state"}, nil)
	descPoolMax = prometheus.NewDesc("pgranger_pool_max_connections",
		"backend.pool-size: the most backend connections per database.", []string{"database"}, nil)
	descPoolWaiting = prometheus.NewDesc("pgranger_pool_waiting",
		"New sessions waiting for a backend connection now.", nil, nil)
	descPoolWait = prometheus.NewDesc("pgranger_pool_wait_seconds",
		"Time a new session waited for a backend connection (connecting one included).", nil, nil)
	descBytesReceived = prometheus.NewDesc("pgranger_client_bytes_received_total",
		"Bytes read from client connections (TLS included).", nil, nil)
	descBytesSent = prometheus.NewDesc("pgranger_client_bytes_sent_total",
		"Bytes written to client connections (TLS included).", nil, nil)
	descAuditWritten = prometheus.NewDesc("pgranger_audit_records_total",
		"Audit records written.", nil, nil)
	descAuditDropped = prometheus.NewDesc("pgranger_audit_dropped_total",
		"Audit records dropped because the buffer (audit.buffer-size) was full: the audit output is slower than the statements.", nil, nil)
	descAuditErrors = prometheus.NewDesc("pgranger_audit_write_errors_total",
		"Audit records that could not be written (disk full, closed output).", nil, nil)
	descReloads = prometheus.NewDesc("pgranger_config_reloads_total",
		"Configuration reloads (SIGHUP) by result: ok, or error (the running configuration stayed).", []string{"result"}, nil)
	descReloadTime = prometheus.NewDesc("pgranger_config_last_reload_success_timestamp_seconds",
		"Unix time of the last successful reload; 0 when none.", nil, nil)
	descBackendUp = prometheus.NewDesc("pgranger_backend_reachable",
		"1 when pgranger can connect (checked at scrape or /readyz, at most once a second) to the backend as the service role; 0 when it could not.", nil, nil)
)

func (c *ProxyCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBuild, descConnActive, descConnTotal, descConnRejected, descStatements, descRewrite,
		descCacheHits, descCacheMisses, descPoolConns, descPoolMax, descPoolWaiting, descPoolWait, descBytesReceived, descBytesSent,
		descAuditWritten, descAuditDropped, descAuditErrors, descReloads, descReloadTime} {
		ch <- d
	}
	if c.Backend != nil {
		ch <- descBackendUp
	}
}

func counter(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

func histogramOf(d *prometheus.Desc, h pgwire.Histogram) prometheus.Metric {
	return prometheus.MustNewConstHistogram(d, h.Count, h.Sum, h.Buckets)
}

func (c *ProxyCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- gauge(descBuild, 1, c.Version, runtime.Version())
	st := c.Server.Stats()
	ch <- gauge(descConnActive, float64(st.ConnectionsActive))
	ch <- counter(descConnTotal, float64(st.ConnectionsTotal))
	for _, reason := range []string{"max_clients", "auth", "tls", "protocol", "backend", "pool_exhausted", "other"} {
		ch <- counter(descConnRejected, float64(st.ConnectionsRejected[reason]), reason)
	}
	keys := make([]pgwire.StatementKey, 0, len(st.Statements))
	for k := range st.Statements {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Kind != keys[j].Kind {
			return keys[i].Kind < keys[j].Kind
		}
		return keys[i].Result < keys[j].Result
	})
	for _, k := range keys {
		ch <- counter(descStatements, float64(st.Statements[k]), k.Kind, k.Result)
	}
	ch <- histogramOf(descRewrite, st.RewriteSeconds)
	cs := c.Rewriter.CacheStats()
	ch <- counter(descCacheHits, float64(cs.StatementHits), "statement")
	ch <- counter(descCacheHits, float64(cs.TemplateHits), "template")
	ch <- counter(descCacheMisses, float64(cs.StatementMisses), "statement")
	ch <- counter(descCacheMisses, float64(cs.TemplateMisses), "template")
	for db, p := range st.Pools {
		ch <- gauge(descPoolConns, float64(p.InUse), db, "in_use")
		ch <- gauge(descPoolConns, float64(p.Idle), db, "idle")
		ch <- gauge(descPoolMax, float64(p.Max), db)
	}
	ch <- gauge(descPoolWaiting, float64(st.PoolWaiting))
	ch <- histogramOf(descPoolWait, st.PoolWaitSeconds)
	ch <- counter(descBytesReceived, float64(st.BytesReceived))
	ch <- counter(descBytesSent, float64(st.BytesSent))
	as := c.Audit.Stats()
	ch <- counter(descAuditWritten, float64(as.Written))
	ch <- counter(descAuditDropped, float64(as.Dropped))
	ch <- counter(descAuditErrors, float64(as.WriteErrors))
	ch <- counter(descReloads, float64(c.Reloads.ok.Load()), "ok")
	ch <- counter(descReloads, float64(c.Reloads.failed.Load()), "error")
	ch <- gauge(descReloadTime, float64(c.Reloads.lastSuccess.Load()))
	if c.Backend != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		up := 0.0
		if c.Backend(ctx) == nil {
			up = 1
		}
		cancel()
		ch <- gauge(descBackendUp, up)
	}
}
