package pgwire

import (
	"bytes"
	"math"
	"time"

	"github.com/pgranger/pgranger/audit"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// This file follows each allowed statement from the moment it is sent to
// its completion, for the statement counters (stats.go) and the audit
// records, which are written when a statement completes (one per statement
// and governed relation) or, for a denial, at once. What a record says of
// the decisions, and whether it is written, the rewrite decided with them
// (sqlrewrite.Result.Audit, under the policies it used); the session adds
// who ran it and what the execution told, and audit builds the records.
// The one per-row cost is an integer increment per DataRow of an Execute,
// for the row count of a portal read in several Executes.

// stmtRun follows one allowed SQL text from the moment it is sent to the
// completion of each of its statements, for the audit record (rows,
// duration) and the statement counters. The client loop creates it and
// hangs it on the pending entry; from then on only the backend loop
// touches it.
type stmtRun struct {
	res  *sqlrewrite.Result
	last time.Time // when it was checked, then when its previous statement completed
	next int       // index in res.Statements of the next statement to complete
	done bool
	// rows counts the DataRows of a portal's Executes; once an Execute
	// was suspended (row limit) the record carries this total, since each
	// Execute's command tag counts only its own rows.
	rows      int64
	suspended bool
}

// sessionObs is the session's share of this file: the portals' runs are
// the client loop's, the counters' cache the backend loop's.
type sessionObs struct {
	portals map[string]*stmtRun // bound portal → its run, until Execute takes it
	unnamed *stmtRun            // the unnamed portal's, likewise
	// kind and counters: the statement counters of the kind counted
	// last (backend loop), so a session repeating one kind of statement
	// looks nothing up per statement.
	kind     sqlrewrite.StatementKind
	counters *kindCounters
}

// track starts the run of an allowed text sent now. The clock is read
// only for the audit record.
func (s *session) track(res *sqlrewrite.Result) *stmtRun {
	if res == nil || res.Err != nil {
		return nil
	}
	r := &stmtRun{res: res}
	if s.srv.opts.Audit != nil {
		r.last = time.Now()
	}
	return r
}

// bindRun remembers the run of a prepared statement bound to portal: one
// audit record per execution, written when its Execute completes. The
// unnamed portal, which most drivers use for every statement, has a field
// of its own: no map write and delete per statement.
func (s *session) bindRun(portal string, res *sqlrewrite.Result) {
	r := s.track(res)
	if r == nil {
		return
	}
	if portal == "" {
		s.obs.unnamed = r
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
	if portal == "" {
		r := s.obs.unnamed
		s.obs.unnamed = nil
		return r
	}
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
		tag, _ := cstringBytes(body)
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
	st := &r.res.Statements[r.next]
	r.next++
	result := ResultOK
	if failed {
		result = ResultError
	}
	if st.Kind != s.obs.kind || s.obs.counters == nil {
		s.obs.kind, s.obs.counters = st.Kind, s.srv.obs.kindCounters(st.Kind)
	}
	s.obs.counters.add(result)
	log := s.srv.opts.Audit
	if log == nil {
		return
	}
	now := time.Now()
	log.Ran(s.auditWho, &r.res.Audit, r.next-1, audit.Outcome{Start: r.last, End: now, Rows: rows, Failed: failed})
	r.last = now
}

// tagRows is the row count of a command tag ("SELECT 3", "INSERT 0 1",
// "UPDATE 2", "COPY 5"); 0 for tags without one ("BEGIN", "SET").
func tagRows(tag []byte) int64 {
	i := bytes.LastIndexByte(tag, ' ')
	if i < 0 || i == len(tag)-1 {
		return 0
	}
	var n int64
	for _, c := range tag[i+1:] {
		d := int64(c - '0')
		if c < '0' || c > '9' || n > (math.MaxInt64-d)/10 {
			return 0 // as strconv.ParseInt's error was
		}
		n = n*10 + d
	}
	return n
}

// audit records a denial at once (nothing of the text runs) and counts
// it, as the rewrite decided it under the policies it was decided under.
// Allowed texts are recorded, one record per statement and governed
// relation, when they complete (track, bindRun).
func (s *session) audit(res *sqlrewrite.Result) {
	if res.Err == nil {
		return
	}
	kind := sqlrewrite.StatementKind("")
	if n := len(res.Statements); n > 0 {
		kind = res.Statements[n-1].Kind // the denied statement is the last one analysed
	}
	s.srv.obs.statement(kind, ResultDenied)
	s.srv.opts.Audit.Refused(s.auditWho, &res.Audit, time.Now())
}
