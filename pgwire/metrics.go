package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgranger/pgranger/audit"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// This file holds what operators see of the wire side: the counters behind
// pgranger's Prometheus metrics (read with Server.Stats, exported by the
// admin endpoint), the audit records written when a statement completes,
// and the reloadable client certificate. The relay paths only call in with
// one-line hooks; nothing here runs per row: bytes are counted per socket
// read or write (one buffered batch of messages), statements per command.
// The one per-row cost is an integer increment per DataRow of an Execute,
// for the row count of a portal read in several Executes.

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
	statements  sync.Map // StatementKey → *atomic.Int64
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
	switch {
	case errors.Is(err, errCancelHandled), errors.Is(err, errClientGone):
		// A cancel request, or a client that left (a probe, a client
		// that gave up): nothing was refused.
	case errors.As(err, &fe):
		switch {
		case fe.code == codeInvalidPassword || fe.code == codeInvalidAuth:
			o.reject("auth")
		case fe.code == codeTooManyConnections:
			o.reject("pool_exhausted")
		case fe.code == codeConnectionFailure || strings.HasPrefix(fe.code, "08") && fe.code != codeProtocolViolation:
			o.reject("backend")
		case fe.code == codeProtocolViolation || fe.code == codeFeatureNotSupported:
			o.reject("protocol")
		default:
			o.reject("other")
		}
	case strings.HasPrefix(err.Error(), "TLS handshake"):
		o.reject("tls")
	default:
		o.reject("other")
	}
}

func (o *serverObs) statement(kind, result string) {
	if kind == "" {
		kind = "UNKNOWN"
	}
	addTo(&o.statements, StatementKey{Kind: kind, Result: result})
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
		st.Statements[k.(StatementKey)] = v.(*atomic.Int64).Load()
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

// reloadableTLS serves the certificate of t through GetCertificate, so
// ReloadTLS can replace it for new handshakes.
func (o *serverObs) reloadableTLS(t *tls.Config) *tls.Config {
	if t == nil || len(t.Certificates) != 1 {
		return t
	}
	cert := t.Certificates[0]
	o.cert.Store(&cert)
	c := t.Clone()
	c.Certificates = nil
	c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return o.cert.Load(), nil }
	return c
}

// ReloadTLS reads listen.tls-cert and listen.tls-key again (a renewed
// certificate): handshakes from now on use it, sessions already in TLS keep
// theirs. It fails, changing nothing, when the files do not load or when
// the server was started without TLS (turning TLS on needs a restart).
func (s *Server) ReloadTLS(certFile, keyFile string) error {
	if s.obs.cert.Load() == nil {
		return errors.New("the server was started without listen.tls-cert; enabling TLS needs a restart")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return err
	}
	s.obs.cert.Store(&cert)
	return nil
}

// stmtRun follows one allowed SQL text from the moment it is sent to the
// completion of each of its statements, for the audit record (rows,
// duration) and the statement counters. The client loop creates it and
// hangs it on the pending entry; from then on only the backend loop
// touches it.
type stmtRun struct {
	res  *sqlrewrite.Result
	eng  *policy.Engine // policies in force when it was checked (audit only)
	last time.Time      // when it was checked, then when its previous statement completed
	next int            // index in res.Statements of the next statement to complete
	done bool
	// rows counts the DataRows of a portal's Executes; once an Execute
	// was suspended (row limit) the record carries this total, since each
	// Execute's command tag counts only its own rows.
	rows      int64
	suspended bool
}

// sessionObs is the session's share of this file (client loop only).
type sessionObs struct {
	portals map[string]*stmtRun // bound portal → its run, until Execute takes it
}

// track starts the run of an allowed text sent now.
func (s *session) track(res *sqlrewrite.Result) *stmtRun {
	if res == nil || res.Err != nil {
		return nil
	}
	r := &stmtRun{res: res, last: time.Now()}
	if s.srv.opts.Audit != nil {
		r.eng = s.srv.opts.Policies.PolicyState().Engine
	}
	return r
}

// bindRun remembers the run of a prepared statement bound to portal: one
// audit record per execution, written when its Execute completes.
func (s *session) bindRun(portal string, res *sqlrewrite.Result) {
	r := s.track(res)
	if r == nil {
		return
	}
	if s.obs.portals == nil {
		s.obs.portals = map[string]*stmtRun{}
	}
	s.obs.portals[portal] = r
}

// takeRun hands the bound run to the portal's first Execute (later
// Executes of a suspended portal continue the same run: resumePortal).
func (s *session) takeRun(portal string) *stmtRun {
	r := s.obs.portals[portal]
	if r != nil {
		delete(s.obs.portals, portal)
	}
	return r
}

// runCompleted: a CommandComplete or EmptyQueryResponse for head.
func (s *session) runCompleted(head *pending, typ byte, body []byte) {
	if head == nil || head.run == nil || head.run.done {
		return
	}
	var rows int64
	switch {
	case head.run.suspended:
		rows = head.run.rows
	case typ == 'C':
		tag, _, _ := cstring(body)
		rows = tagRows(tag)
	}
	s.finishStatement(head.run, rows, false)
	if head.kind != 'Q' {
		head.run.done = true
	}
}

// runFailed: an ErrorResponse for head. In a simple Query the statements
// after the failing one never run.
func (s *session) runFailed(head *pending) {
	if head.run == nil || head.run.done {
		return
	}
	var rows int64 // no command tag: no count, except what a suspended portal returned
	if head.run.suspended {
		rows = head.run.rows
	}
	s.finishStatement(head.run, rows, true)
	head.run.done = true
}

// portalReply: ParseComplete, BindComplete, CloseComplete,
// PortalSuspended or NoData for head. A portal read in several
// row-limited Executes (JDBC's fetch size, pgx's and libpq's row limits)
// is one execution: its record is written once, with the rows of all its
// Executes, when the portal completes (CommandComplete), is closed, is
// replaced by a Bind of the same name, or its transaction ends.
func (s *session) portalReply(typ byte, head *pending) {
	if head == nil {
		return
	}
	switch {
	case typ == 's' && head.kind == 'E' && head.run != nil && !head.run.done:
		head.run.suspended = true
		if s.suspended == nil {
			s.suspended = map[string]*stmtRun{}
		}
		s.suspended[head.portal] = head.run
	case typ == '2' && head.kind == 'B':
		s.endPortal(head.portal)
	case typ == '3' && head.closesPortal:
		s.endPortal(head.portal)
	}
}

// resumePortal takes the run of a suspended portal for its next Execute.
func (s *session) resumePortal(portal string) *stmtRun {
	r := s.suspended[portal]
	if r != nil {
		delete(s.suspended, portal)
	}
	return r
}

// endPortal writes the record of a suspended portal that ends without
// completing.
func (s *session) endPortal(portal string) {
	if r := s.resumePortal(portal); r != nil && !r.done {
		s.finishStatement(r, r.rows, false)
		r.done = true
	}
}

// endPortals ends every suspended portal (the transaction ended).
func (s *session) endPortals() {
	for name := range s.suspended {
		s.endPortal(name)
	}
}

// finishStatement counts and audits the next statement of r; rows < 0:
// unknown.
func (s *session) finishStatement(r *stmtRun, rows int64, failed bool) {
	if r.next >= len(r.res.Statements) {
		return
	}
	st := r.res.Statements[r.next]
	r.next++
	result := ResultOK
	if failed {
		result = ResultError
	}
	s.srv.obs.statement(st.Kind, result)
	log := s.srv.opts.Audit
	if log == nil {
		return
	}
	now := time.Now()
	dur := float64(now.Sub(r.last).Microseconds()) / 1000
	start := r.last
	r.last = now
	base := s.auditBase(r.res, r.eng, start)
	base.Action = st.Kind
	if rows >= 0 {
		base.RowsAffected = &rows
	}
	base.DurationMs = &dur
	base.Failed = failed
	subj := s.rsess.Subject
	if len(st.Resources) == 0 {
		if r.eng == nil || r.eng.AuditedAccess(&policy.AuditQuery{Subject: subj, Action: st.Kind, At: start}) {
			rec := base
			log.Log(&rec)
		}
		return
	}
	for _, u := range st.Resources {
		// The audit mode, exclusions and filters of the bundle, and the
		// isAuditEnabled of the policies that decided, as Ranger's plugins
		// apply them (policy.AuditedAccess).
		if r.eng != nil && !r.eng.AuditedAccess(&policy.AuditQuery{Subject: subj, Resource: policy.Resource{Database: u.Database, Table: u.Table},
			Columns: u.Columns, Access: u.Access, Action: st.Kind, PolicyIDs: [][]int64{u.PolicyIDs, u.MaskPolicyIDs, u.FilterPolicyIDs}, At: start}) {
			continue
		}
		rec := base
		rec.Access = u.Access
		rec.Resource = u.Database + "/" + u.Table
		rec.ResType = "@table"
		if len(u.Columns) > 0 {
			rec.Resource += "/" + strings.Join(u.Columns, ",")
			rec.ResType = "@column"
		}
		if len(u.PolicyIDs) > 0 {
			rec.Policy = u.PolicyIDs[0]
		}
		rec.MaskPolicies = u.MaskPolicyIDs
		rec.FilterPolicies = u.FilterPolicyIDs
		log.Log(&rec)
	}
}

// tagRows is the row count of a command tag ("SELECT 3", "INSERT 0 1",
// "UPDATE 2", "COPY 5"); 0 for tags without one ("BEGIN", "SET").
func tagRows(tag string) int64 {
	i := strings.LastIndexByte(tag, ' ')
	if i < 0 {
		return 0
	}
	n, err := strconv.ParseInt(tag[i+1:], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func (s *session) auditBase(res *sqlrewrite.Result, eng *policy.Engine, at time.Time) audit.Record {
	r := audit.Record{
		EvtTime:     at.UTC(),
		ReqUser:     s.id.User,
		Repo:        s.srv.cfg.Policy.ServiceName,
		CliIP:       hostOf(s.client.RemoteAddr()),
		Database:    s.rsess.Database,
		Fingerprint: res.Fingerprint,
		Result:      1,
		Roles:       s.id.Roles,
		AuthMethod:  s.id.Method,
		TokenSub:    s.id.Subject,
		TokenID:     s.id.TokenID,
	}
	if eng != nil {
		v := eng.PolicyVersion()
		r.PolicyVersion = &v
	}
	return r
}

// audit records a denial at once (nothing of the text runs) and counts
// it. Allowed texts are recorded, one record per statement and governed
// relation, when they complete (track, bindRun).
func (s *session) audit(res *sqlrewrite.Result) {
	if res.Err == nil {
		return
	}
	kind := ""
	var denied *sqlrewrite.StatementInfo
	if n := len(res.Statements); n > 0 {
		// The denied statement is the last one analysed.
		denied = &res.Statements[n-1]
		kind = denied.Kind
	}
	s.srv.obs.statement(kind, ResultDenied)
	log := s.srv.opts.Audit
	if log == nil {
		return
	}
	eng := s.srv.opts.Policies.PolicyState().Engine
	var ids [][]int64
	q := policy.AuditQuery{Subject: s.rsess.Subject, Denied: true}
	r := s.auditBase(res, eng, time.Now())
	r.Result = 0
	r.Action = "DENIED"
	if denied != nil {
		r.Action = denied.Kind
		if len(denied.Resources) > 0 {
			u := denied.Resources[len(denied.Resources)-1]
			r.Resource, r.Access, r.ResType = u.Database+"/"+u.Table, u.Access, "@table"
		}
	}
	if d := res.Err.Denied; d != nil {
		// The denial names the resource, the access and the deciding policy.
		r.Resource, r.ResType = deniedResource(d)
		r.Access, r.Policy = d.Access, d.PolicyID
		ids = append(ids, []int64{r.Policy})
		q.Resource = policy.Resource{Database: d.Database, Table: d.Table}
		if d.Column != "" {
			q.Columns = []string{d.Column}
		}
	}
	q.Access, q.Action, q.PolicyIDs, q.At = r.Access, r.Action, ids, r.EvtTime
	if eng != nil && !eng.AuditedAccess(&q) {
		return
	}
	r.Reason = auditReason(res.Err)
	log.Log(&r)
}

// deniedResource is the audit record's resource and resource type of a
// denial, in Ranger's notation: database/table[/column] or database/udf.
func deniedResource(d *sqlrewrite.Denial) (resource, resType string) {
	switch {
	case d.UDF != "":
		return d.Database + "/" + d.UDF, "@udf"
	case d.Column != "":
		return d.Database + "/" + d.Table + "/" + d.Column, "@column"
	}
	return d.Database + "/" + d.Table, "@table"
}

// auditReason is the denial's message, except where it may quote the
// statement text (and so a literal): the parser's errors and limits, and
// messages about SQL that does not parse. Those are named by SQLSTATE.
func auditReason(e *sqlrewrite.Error) string {
	switch {
	case e.Code == sqlrewrite.CodeSyntaxError:
		return "syntax error (SQLSTATE 42601)"
	case e.Code == sqlrewrite.CodeStatementTooComplex || e.Code == sqlrewrite.CodeProgramLimitExceeded:
		return "statement too large or too complex (SQLSTATE " + e.Code + ")"
	case strings.Contains(e.Message, "parse"):
		return "the statement could not be analysed (SQLSTATE " + e.Code + ")"
	}
	return e.Message
}
