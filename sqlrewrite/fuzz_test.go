package sqlrewrite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
)

// FuzzRewrite checks, for any SQL text, the rewriter's two promises
// (docs/testing.md):
//
//  1. whatever it allows, it sends as SQL that parses, and so do the
//     views it asks the session to create;
//  2. no governed relation that needs a wrapper is referenced outside one.
//
// Precisely, in the rewritten statements (views excluded), every RangeVar
// naming a relation of the catalog that is governed (not pg_catalog or
// information_schema) and needs a wrapper for the user must be:
//
//   - when it has a row filter: the only FROM item of a wrapper subquery
//     with a WHERE clause (the filter, and the barrier's guards), or read
//     through a pg_temp.pgranger_dml_* view of Result.Views (DML,
//     policy.dml-row-filter = "apply");
//   - when it has masks: the only FROM item of a wrapper subquery whose
//     target list is the relation's columns in order, each masked column
//     computed (not the bare column), or the target of a DML statement
//     (masked reads there are rewritten in place, apply mode only);
//   - when it has restricted columns only: a wrapper as above (restricted
//     columns may be bare only inside a view's definition, where access is
//     the view's), or a DML target (reads are access-checked);
//
// a relation named by LOCK (which reads nothing) may stand bare;
// every unqualified RangeVar must be a CTE name or a pg_catalog relation;
// a view of the catalog (which is expanded) must not be referenced for a
// user who is not a super user; and every pg_temp view named must be one
// of Result.Views, whose definition reads the relation with its filter.
// An internal error (a recovered panic) is a finding too.
//
// Run: go test ./sqlrewrite -run '^$' -fuzz FuzzRewrite -fuzztime 5m
// (the corpus it finds goes to testdata/fuzz/FuzzRewrite).
func FuzzRewrite(f *testing.F) {
	files, _ := filepath.Glob("testdata/rewrite/*.sql")
	for _, file := range files {
		for _, c := range parseCases(f, file) {
			f.Add(c.sql, c.opts.DMLRowFilter == DMLRowFilterApply)
		}
	}
	eng := testEngine(f)
	snap := testCatalog()
	rwDeny, rwApply := New(Options{}), New(Options{DMLRowFilter: DMLRowFilterApply})
	users := []string{"bob", "carol", "alice", "eve"}
	f.Fuzz(func(t *testing.T, sql string, apply bool) {
		if len(sql) > 4096 {
			return
		}
		if _, err := pg.Parse(sql); err != nil {
			return
		}
		rw := rwDeny
		if apply {
			rw = rwApply
		}
		for _, user := range users {
			subj := testSubjects[user]
			sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
				SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
			env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: snap, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			res := rw.Rewrite(context.Background(), env, sess, sql)
			if res.Err != nil {
				if strings.Contains(res.Err.Message, "internal error while analysing") {
					t.Fatalf("user %s: %s\nSQL: %s", user, res.Err.Message, sql)
				}
				continue
			}
			if err := checkWrapped(eng, snap, subj, res); err != nil {
				t.Fatalf("user %s: %v\nSQL: %s\nrewritten: %s", user, err, sql, res.SQL)
			}
			if err := templateAgrees(rw, env, sess, sql); err != nil {
				t.Fatalf("user %s: %v\nSQL: %s", user, err, sql)
			}
			if res.fromTemplate {
				exactSess := *sess
				exact, _ := rw.rewriteText(context.Background(), env, &exactSess, sql, false)
				if err := checkWrapped(eng, snap, subj, exact); err != nil {
					t.Fatalf("user %s: %v\nSQL: %s\nrewritten: %s", user, err, sql, exact.SQL)
				}
			}
		}
	})
}

// needs is what a relation needs for a subject: filter, masked columns,
// restricted columns.
type needs struct {
	filter     bool
	masked     []bool
	restricted []bool
}

func (n needs) wrap() bool {
	if n.filter {
		return true
	}
	for i := range n.masked {
		if n.masked[i] || n.restricted[i] {
			return true
		}
	}
	return false
}

func relationNeeds(eng *policy.Engine, subj *policy.Subject, rel *catalog.Relation, now time.Time) needs {
	res := policy.Resource{Database: rel.RootSchema, Table: rel.RootName}
	if res.Database == "" {
		res.Database, res.Table = rel.Schema, rel.Name
	}
	n := needs{masked: make([]bool, len(rel.Columns)), restricted: make([]bool, len(rel.Columns))}
	if eng.IsSuperUser(subj) {
		return n
	}
	for i, c := range rel.Columns {
		cr := res
		cr.Column = c.Name
		n.restricted[i] = !eng.Access(subj, cr, "select", now).Allowed
		n.masked[i] = eng.Mask(subj, cr, now).Type != ""
	}
	n.filter = len(eng.RowFilter(subj, res, now).Exprs) > 0
	return n
}

// checkWrapped verifies the invariant of FuzzRewrite on one result.
func checkWrapped(eng *policy.Engine, snap *catalog.Snapshot, subj *policy.Subject, res *Result) error {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tree, err := pg.Parse(res.SQL)
	if err != nil {
		return fmt.Errorf("the rewritten text does not parse: %v", err)
	}
	if res.Changed && !res.fromTemplate {
		// (A template's text keeps the client's literals as written; the
		// fuzz target checks it against the exact rewrite instead.)
		// What was sent must mean what the rewriter built: rendering it
		// again gives the same text (a deparser quirk that changes the
		// meaning of an expression would show here).
		if again, err := pg.Deparse(tree); err != nil || again != res.SQL {
			return fmt.Errorf("the rewritten text is not stable under parse and deparse:\n first: %s\nsecond: %s (%v)", res.SQL, again, err)
		}
	}
	views := map[string]bool{}
	for _, v := range res.Views {
		vt, err := pg.Parse(v.Create)
		if err != nil || len(vt.Stmts) != 1 || vt.Stmts[0].Stmt.GetViewStmt() == nil {
			return fmt.Errorf("view %s does not parse as one CREATE VIEW: %v", v.Name, err)
		}
		views[v.Name] = true
		body := vt.Stmts[0].Stmt.GetViewStmt().Query.GetSelectStmt()
		if body == nil || len(body.FromClause) != 1 {
			return fmt.Errorf("view %s is not a wrapper over one relation", v.Name)
		}
		from := body.FromClause[0]
		if ts := from.GetRangeTableSample(); ts != nil {
			from = ts.Relation
		}
		if rv := from.GetRangeVar(); rv != nil {
			rel, ok := snap.Lookup(rv.Schemaname, rv.Relname)
			if !ok {
				return fmt.Errorf("view %s reads %s.%s, which the catalog does not have", v.Name, rv.Schemaname, rv.Relname)
			}
			if n := relationNeeds(eng, subj, rel, now); n.filter && body.WhereClause == nil {
				return fmt.Errorf("view %s reads %s.%s without its row filter", v.Name, rel.Schema, rel.Name)
			}
		} else if from.GetRangeSubselect() == nil {
			return fmt.Errorf("view %s reads neither a relation nor a view expansion", v.Name)
		}
	}
	ctes := map[string]bool{}
	walkNodes(tree, func(n *pg.Node) bool {
		if c := n.GetCommonTableExpr(); c != nil {
			ctes[c.Ctename] = true
		}
		return true
	})
	// Allowed placements: the only FROM item of a wrapper, a DML target.
	wrapped := map[*pg.RangeVar]*pg.SelectStmt{}
	targets := map[*pg.RangeVar]bool{}
	locked := map[*pg.RangeVar]bool{}
	walkNodes(tree, func(n *pg.Node) bool {
		switch v := n.Node.(type) {
		case *pg.Node_LockStmt:
			for _, r := range v.LockStmt.Relations {
				if rv := r.GetRangeVar(); rv != nil {
					locked[rv] = true
				}
			}
		case *pg.Node_RangeSubselect:
			if sel := v.RangeSubselect.Subquery.GetSelectStmt(); sel != nil && len(sel.FromClause) == 1 {
				from := sel.FromClause[0]
				if ts := from.GetRangeTableSample(); ts != nil {
					from = ts.Relation
				}
				if rv := from.GetRangeVar(); rv != nil {
					wrapped[rv] = sel
				}
			}
		case *pg.Node_InsertStmt:
			targets[v.InsertStmt.Relation] = true
		case *pg.Node_UpdateStmt:
			targets[v.UpdateStmt.Relation] = true
		case *pg.Node_DeleteStmt:
			targets[v.DeleteStmt.Relation] = true
		case *pg.Node_MergeStmt:
			targets[v.MergeStmt.Relation] = true
		case *pg.Node_CopyStmt:
			if v.CopyStmt.IsFrom {
				targets[v.CopyStmt.Relation] = true
			}
		case *pg.Node_TruncateStmt:
			for _, r := range v.TruncateStmt.Relations {
				if rv := r.GetRangeVar(); rv != nil {
					targets[rv] = true
				}
			}
		}
		return true
	})
	// A row filter's own tables (a policy expression with a subquery)
	// are the policy's, read as written: they stand in the WHERE clause
	// of a filtered relation's wrapper, where nothing of the user's with
	// a subquery is ever moved.
	policyTables := map[*pg.RangeVar]bool{}
	for rv, sel := range wrapped {
		if rel, ok := snap.Lookup(rv.Schemaname, rv.Relname); ok && relationNeeds(eng, subj, rel, now).filter {
			walkNodes(sel.WhereClause, func(n *pg.Node) bool {
				if x := n.GetRangeVar(); x != nil {
					policyTables[x] = true
				}
				return true
			})
		}
	}
	var failure error
	walkNodes(tree, func(n *pg.Node) bool {
		if failure != nil {
			return false
		}
		rv := n.GetRangeVar()
		if policyTables[rv] {
			return true
		}
		if rv == nil {
			return true
		}
		if rv.Schemaname == "pg_temp" {
			if !views[rv.Relname] {
				failure = fmt.Errorf("pg_temp.%s is read but is not one of the result's views", rv.Relname)
			}
			return true
		}
		if rv.Schemaname == "" {
			if ctes[rv.Relname] {
				return true
			}
			rel, ok := snap.Lookup("pg_catalog", rv.Relname)
			if !ok {
				failure = fmt.Errorf("unqualified relation %s is neither a CTE nor a pg_catalog relation", rv.Relname)
			} else if !rel.IsSystem() {
				failure = fmt.Errorf("unqualified relation %s", rv.Relname)
			}
			return true
		}
		rel, ok := snap.Lookup(rv.Schemaname, rv.Relname)
		if !ok || rel.IsSystem() {
			return true // unknown relations are the backend's error; system ones are not governed
		}
		if locked[rv] {
			return true
		}
		if rel.Kind == catalog.KindView && !eng.IsSuperUser(subj) && !targets[rv] {
			failure = fmt.Errorf("view %s.%s is referenced instead of expanded", rel.Schema, rel.Name)
			return true
		}
		need := relationNeeds(eng, subj, rel, now)
		if !need.wrap() {
			return true
		}
		switch {
		case need.filter && wrapped[rv] == nil:
			failure = fmt.Errorf("%s.%s has a row filter for %s but is referenced outside a wrapper", rel.Schema, rel.Name, subj.User)
		case need.filter && wrapped[rv].WhereClause == nil:
			failure = fmt.Errorf("the wrapper of %s.%s has no row filter for %s", rel.Schema, rel.Name, subj.User)
		case targets[rv]:
			// A DML target: masked reads rewritten in place (apply), restricted reads denied.
		case wrapped[rv] != nil:
			sel := wrapped[rv]
			if len(sel.TargetList) != len(rel.Columns) {
				failure = fmt.Errorf("the wrapper of %s.%s has %d columns, the relation %d", rel.Schema, rel.Name, len(sel.TargetList), len(rel.Columns))
				break
			}
			for i, tl := range sel.TargetList {
				rt := tl.GetResTarget()
				bare := false
				if cr := rt.GetVal().GetColumnRef(); cr != nil && len(cr.Fields) == 1 && strVal(cr.Fields[0]) == rel.Columns[i].Name {
					bare = true
				}
				if bare && need.masked[i] {
					failure = fmt.Errorf("the wrapper of %s.%s reads masked column %s bare", rel.Schema, rel.Name, rel.Columns[i].Name)
					break
				}
			}
		default:
			failure = fmt.Errorf("%s.%s needs a wrapper for %s but is referenced outside one", rel.Schema, rel.Name, subj.User)
		}
		return true
	})
	return failure
}

// TestFuzzInvariantHolds runs the invariant of FuzzRewrite over every
// golden case (so a plain go test exercises it) and checks that it does
// catch a violation.
func TestFuzzInvariantHolds(t *testing.T) {
	eng := testEngine(t)
	snap := testCatalog()
	files, _ := filepath.Glob("testdata/rewrite/*.sql")
	n := 0
	for _, file := range files {
		for _, gr := range runGoldenFile(t, eng, file) {
			if gr.res.Err != nil {
				continue
			}
			if err := checkWrapped(eng, snap, testSubjects[gr.c.user], gr.res); err != nil {
				t.Errorf("%s: %s: %v\n%s", filepath.Base(file), gr.c.name, err, gr.res.SQL)
			}
			n++
		}
	}
	bob := testSubjects["bob"]
	for _, bad := range []string{
		"SELECT ssn FROM sales.orders",
		"SELECT id FROM (SELECT id, customer, ssn, email, amount, region, order_date FROM sales.orders) o",
		"SELECT * FROM pg_temp.pgranger_rf_0000",
		"SELECT id FROM orders",
		"SELECT id FROM sales.orders_view",
	} {
		if err := checkWrapped(eng, snap, bob, &Result{SQL: bad}); err == nil {
			t.Errorf("the invariant accepts %s", bad)
		}
	}
	t.Logf("%d allowed golden rewrites checked", n)
}
