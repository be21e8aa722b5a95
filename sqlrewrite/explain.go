package sqlrewrite

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pgranger/pgranger/sqlstate"
)

// EXPLAIN (docs/security.md, "Mechanisms": EXPLAIN) has its statement analysed and
// rewritten like the statement itself — access checks, wrappers, DML and
// DDL rules — and is then refused when any relation the statement reads
// has a row filter for the user, in every form (plain, ANALYZE, VERBOSE,
// any FORMAT). A plan of a filtered relation leaks what the filter hides:
// EXPLAIN ANALYZE reports "Rows Removed by Filter" and actual row counts
// of scans below the barrier, so a leakproof predicate pushed under the
// filter (id > 5) counts hidden rows exactly; plain EXPLAIN shows row
// estimates computed from the statistics of the whole table (the
// selectivity of amount = 3120 over rows the user cannot see), the same
// data pg_stats is denied for. Statements over relations with masks only
// (which hide no rows) or no policy at all may be explained in every
// form: their plans show the rewritten statement, mask expressions
// included (policy text, not data), and count only rows the user may see.
// EXPLAIN ANALYZE runs its statement, so a DML statement under it needs
// everything the statement itself needs.
func (r *stmtRewriter) explainStatement(e *pg.ExplainStmt) {
	if e.Query == nil {
		r.fail(errorf(sqlstate.FeatureNotSupported, "EXPLAIN without a statement"))
		return
	}
	switch e.Query.Node.(type) {
	case *pg.Node_SelectStmt, *pg.Node_InsertStmt, *pg.Node_UpdateStmt, *pg.Node_DeleteStmt,
		*pg.Node_MergeStmt, *pg.Node_ExecuteStmt, *pg.Node_CreateTableAsStmt:
	default:
		r.fail(denyf("EXPLAIN %s is not allowed through pgranger (user %q)", statementKind(e.Query), r.sess.Subject.User))
		return
	}
	if ctas := e.Query.GetCreateTableAsStmt(); ctas != nil && !r.rw.opts.AllowDDL {
		r.fail(r.ddlOff("CREATE TABLE AS"))
		return
	}
	r.query(e.Query)
	if r.err != nil {
		return
	}
	for _, ref := range r.refs {
		if ref.pol == nil || ref.pol.super || len(ref.pol.filter.Exprs) == 0 {
			continue
		}
		r.fail(denyf("EXPLAIN of a statement that reads %s.%s is not allowed for user %q: a row filter applies to it, and plans and row counts reveal the rows it hides",
			ref.rel.Schema, ref.rel.Name, r.sess.Subject.User))
		return
	}
	r.finish()
}
