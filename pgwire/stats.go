package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

// This file holds the counters behind pgranger's Prometheus metrics (read
// with Server.Stats, exported by the admin endpoint). The relay paths only
// call in with one-line hooks; nothing here runs per row: bytes are
// counted per socket read or write (one buffered batch of messages),
// statements per command (stmtaudit.go). The client certificate's reload
// is in tlsreload.go.

// Statement results in Stats.Statements.
const (
	ResultOK     = "ok"     // allowed, and the backend completed it
	ResultError  = "error"  // allowed, and the backend answered with an error
	ResultDenied = "denied" // refused by pgranger; never reached the backend
)

// Bucket bounds (seconds) of the histograms.
var (
	RewriteBuckets  = []float64{5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 1}
	PoolWaitBuckets = []float64{1e-4, 1e-3, 5e-3, 1e-2, 5e-2, 0.1, 0.5, 1, 5, 10, 30}
)

const maxBuckets = 20

// histogram counts observations per bucket with atomics; the zero value is
// ready (the bounds are passed in, so it needs no constructor).
type histogram struct {
	counts   [maxBuckets + 1]atomic.Uint64 // counts[i]: bounds[i-1] < v <= bounds[i]; the last is +Inf
	sumNanos atomic.Int64
}

func (h *histogram) observe(bounds []float64, d time.Duration) {
	i := sort.SearchFloat64s(bounds, d.Seconds())
	h.counts[i].Add(1)
	h.sumNanos.Add(int64(d))
}

// Histogram is a snapshot in Prometheus' form: cumulative bucket counts.
type Histogram struct {
	Count   uint64
	Sum     float64            // seconds
	Buckets map[float64]uint64 // upper bound → observations ≤ it
}

func (h *histogram) snapshot(bounds []float64) Histogram {
	out := Histogram{Buckets: make(map[float64]uint64, len(bounds)), Sum: float64(h.sumNanos.Load()) / 1e9}
	var cum uint64
	for i, b := range bounds {
		cum += h.counts[i].Load()
		out.Buckets[b] = cum
	}
	out.Count = cum + h.counts[len(bounds)].Load()
	return out
}

// StatementKey labels Stats.Statements.
type StatementKey struct {
	Kind   string // the rewriter's statement kind: SELECT, INSERT, SET, …; UNKNOWN when it could not be classified
	Result string // ResultOK, ResultError or ResultDenied
}

// PoolStats is one database's backend pool.
type PoolStats struct {
	InUse, Idle, Max int
}

// Stats is a snapshot of the server's counters.
type Stats struct {
	ConnectionsActive   int64            // client connections open now (in startup or in a session)
	ConnectionsTotal    int64            // client connections accepted
	ConnectionsRejected map[string]int64 // by reason: max_clients, auth, tls, protocol, backend, pool_exhausted, other
	Statements          map[StatementKey]int64
	RewriteSeconds      Histogram // time to check and rewrite one SQL text (cached or not)
	PoolWaitSeconds     Histogram // time a new session waited for a backend connection
	PoolWaiting         int64     // sessions waiting for a backend connection now
	Pools               map[string]PoolStats
	BytesReceived       int64 // from clients
	BytesSent           int64 // to clients
}

// serverObs is the Server's share of this file.
type serverObs struct {
	connTotal   atomic.Int64
	rejected    sync.Map // reason → *atomic.Int64
	statements  sync.Map // statement kind → *kindCounters
	rewrite     histogram
	poolWait    histogram
	poolWaiting atomic.Int64

	connMu               sync.Mutex
	live                 map[*countingConn]struct{}
	closedIn, closedSent int64

	cert atomic.Pointer[tls.Certificate] // listen.tls-cert, reloadable; nil without TLS
}

func addTo(m *sync.Map, key any) {
	if v, ok := m.Load(key); ok {
		v.(*atomic.Int64).Add(1)
		return
	}
	v, _ := m.LoadOrStore(key, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func (o *serverObs) reject(reason string) { addTo(&o.rejected, reason) }

// startupFailed counts a connection that did not become a session.
func (o *serverObs) startupFailed(err error) {
	var fe *fatalError
	var te *tlsHandshakeError
	switch {
	case errors.Is(err, errCancelHandled), errors.Is(err, errClientGone):
		// A cancel request, or a client that left (a probe, a client
		// that gave up): nothing was refused.
	case errors.As(err, &fe):
		switch {
		case fe.code == sqlstate.InvalidPassword || fe.code == sqlstate.InvalidAuthorization:
			o.reject("auth")
		case fe.code == sqlstate.TooManyConnections:
			o.reject("pool_exhausted")
		case fe.code == sqlstate.ConnectionFailure || strings.HasPrefix(fe.code, "08") && fe.code != sqlstate.ProtocolViolation:
			o.reject("backend")
		case fe.code == sqlstate.ProtocolViolation || fe.code == sqlstate.FeatureNotSupported:
			o.reject("protocol")
		default:
			o.reject("other")
		}
	case errors.As(err, &te):
		o.reject("tls")
	default:
		o.reject("other")
	}
}

func (o *serverObs) statement(kind sqlrewrite.StatementKind, result string) {
	o.kindCounters(kind).add(result)
}

// kindCounters are one statement kind's counters, one per result. A
// session keeps the pointer of the kind it counted last (sessionObs), so
// the map is consulted when the kind changes, not per statement.
type kindCounters [3]atomic.Int64

var results = [3]string{ResultOK, ResultError, ResultDenied}

func (c *kindCounters) add(result string) {
	switch result {
	case ResultOK:
		c[0].Add(1)
	case ResultError:
		c[1].Add(1)
	default:
		c[2].Add(1)
	}
}

func (o *serverObs) kindCounters(kind sqlrewrite.StatementKind) *kindCounters {
	if kind == "" {
		kind = sqlrewrite.KindUnknown
	}
	if v, ok := o.statements.Load(kind); ok {
		return v.(*kindCounters)
	}
	v, _ := o.statements.LoadOrStore(kind, new(kindCounters))
	return v.(*kindCounters)
}

// observeRewrite is deferred by session.rewrite: defer s.srv.obs.observeRewrite(time.Now()).
func (o *serverObs) observeRewrite(start time.Time) {
	o.rewrite.observe(RewriteBuckets, time.Since(start))
}

// acquire takes a backend connection from p, timing the wait.
func (o *serverObs) acquire(ctx context.Context, p *backendPool) (*backendConn, error) {
	o.poolWaiting.Add(1)
	start := time.Now()
	bc, err := p.acquire(ctx)
	o.poolWait.observe(PoolWaitBuckets, time.Since(start))
	o.poolWaiting.Add(-1)
	return bc, err
}

// countingConn counts the bytes of one client connection. Each session
// adds to its own counters (no contention between sessions); a scrape
// sums the live connections and those already closed.
type countingConn struct {
	net.Conn
	obs       *serverObs
	in, sent  atomic.Int64
	closeOnce sync.Once
}

// countConn wraps a newly accepted client connection.
func (o *serverObs) countConn(c net.Conn) net.Conn {
	o.connTotal.Add(1)
	cc := &countingConn{Conn: c, obs: o}
	o.connMu.Lock()
	if o.live == nil {
		o.live = map[*countingConn]struct{}{}
	}
	o.live[cc] = struct{}{}
	o.connMu.Unlock()
	return cc
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.in.Add(int64(n))
	}
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.sent.Add(int64(n))
	}
	return n, err
}

func (c *countingConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() {
		o := c.obs
		o.connMu.Lock()
		delete(o.live, c)
		o.closedIn += c.in.Load()
		o.closedSent += c.sent.Load()
		o.connMu.Unlock()
	})
	return err
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	o := &s.obs
	st := Stats{
		ConnectionsActive:   s.clients.Load(),
		ConnectionsTotal:    o.connTotal.Load(),
		ConnectionsRejected: map[string]int64{},
		Statements:          map[StatementKey]int64{},
		RewriteSeconds:      o.rewrite.snapshot(RewriteBuckets),
		PoolWaitSeconds:     o.poolWait.snapshot(PoolWaitBuckets),
		PoolWaiting:         o.poolWaiting.Load(),
		Pools:               map[string]PoolStats{},
	}
	o.rejected.Range(func(k, v any) bool {
		st.ConnectionsRejected[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	o.statements.Range(func(k, v any) bool {
		for i, result := range results {
			if n := v.(*kindCounters)[i].Load(); n > 0 {
				st.Statements[StatementKey{Kind: string(k.(sqlrewrite.StatementKind)), Result: result}] = n
			}
		}
		return true
	})
	o.connMu.Lock()
	st.BytesReceived, st.BytesSent = o.closedIn, o.closedSent
	for c := range o.live {
		st.BytesReceived += c.in.Load()
		st.BytesSent += c.sent.Load()
	}
	o.connMu.Unlock()
	s.mu.Lock()
	pools := make(map[string]*backendPool, len(s.pools))
	for name, p := range s.pools {
		pools[name] = p
	}
	s.mu.Unlock()
	for name, p := range pools {
		p.mu.Lock()
		st.Pools[name] = PoolStats{InUse: p.open - len(p.idle), Idle: len(p.idle), Max: p.max}
		p.mu.Unlock()
	}
	return st
}
