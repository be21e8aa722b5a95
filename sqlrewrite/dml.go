package sqlrewrite

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/sqlstate"
)

// DML (docs/security.md, "Mechanisms": Writes): INSERT, UPDATE, DELETE, MERGE, COPY
// … FROM STDIN and TRUNCATE need Ranger `update` access on the relation
// they write (the table, and each column they assign), and `select` on
// everything they read: their WHERE, FROM/USING, source queries,
// subqueries and RETURNING lists, analysed like a SELECT (the target's
// columns read count as reads of the target). Relations read other than
// the target get their wrappers as in a SELECT.
//
// A target with a row filter or a mask for the user is, by default,
// denied (Hive's hive.block.update.if.rowfilter.columnmask.specified,
// which Ranger's Hive plugin enables by default). With
// policy.dml-row-filter = "apply":
//
//   - a row-filtered target of INSERT, UPDATE or DELETE becomes a
//     temporary security-barrier view WITH CASCADED CHECK OPTION over the
//     table (pg_temp.pgranger_dml_<digest>), which PostgreSQL updates
//     automatically: UPDATE and DELETE reach only the rows the filter
//     keeps, the filter is evaluated before any user predicate that is not
//     leakproof (the barrier), and rows that INSERT or UPDATE would leave
//     outside the filter fail with 44000 (new row violates check option);
//   - a read of a masked target column (WHERE, SET expressions, ON
//     CONFLICT, RETURNING) sees the masked value, as in a SELECT: the
//     column reference becomes the mask expression; `*` and whole-row
//     references of such a target are refused (list the columns);
//   - MERGE into such a target is denied (PostgreSQL 15 cannot MERGE
//     into a view, so neither the barrier nor the check can be kept), and
//     so are COPY … FROM and TRUNCATE of a row-filtered table (neither can
//     be checked against the filter).

// dmlTarget is what a statement does to the relation it writes.
type dmlTarget struct {
	kind      string       // INSERT, UPDATE, DELETE, MERGE, COPY, TRUNCATE; or a DDL kind (ddl.go)
	written   map[int]bool // column indexes assigned
	currentOf bool         // WHERE CURRENT OF
	// access is the Ranger access the statement needs ("" = update); a
	// DDL target with blockIfGoverned is refused while a row filter or a
	// mask applies, whatever policy.dml-row-filter says.
	access          string
	blockIfGoverned bool
	// returning is the statement's RETURNING list: a masked column read
	// there keeps its output name.
	returning []*pg.Node
	// decisions, for audit: the table-level and per-column update checks.
	table   policy.Decision
	columns map[int]policy.Decision
}

// colNode is a column reference attributed to a DML target: the node and
// the column index it reads (-1: a star or whole-row reference).
type colNode struct {
	node *pg.Node
	col  int
}

func isDMLNode(n *pg.Node) bool {
	switch n.Node.(type) {
	case *pg.Node_InsertStmt, *pg.Node_UpdateStmt, *pg.Node_DeleteStmt, *pg.Node_MergeStmt:
		return true
	}
	return false
}

// dmlStatement analyses an INSERT, UPDATE, DELETE or MERGE (top level or
// a data-modifying WITH item); parent carries the CTEs it can see.
func (r *stmtRewriter) dmlStatement(n *pg.Node, parent *scope) {
	if r.err != nil {
		return
	}
	switch v := n.Node.(type) {
	case *pg.Node_InsertStmt:
		r.insertStatement(v.InsertStmt, parent)
	case *pg.Node_UpdateStmt:
		r.updateStatement(v.UpdateStmt, parent)
	case *pg.Node_DeleteStmt:
		r.deleteStatement(v.DeleteStmt, parent)
	case *pg.Node_MergeStmt:
		r.mergeStatement(v.MergeStmt, parent)
	default:
		r.fail(errorf(sqlstate.FeatureNotSupported, "unsupported data-modifying statement"))
	}
}

func (r *stmtRewriter) insertStatement(s *pg.InsertStmt, parent *scope) {
	sc := &scope{parent: parent}
	if s.WithClause != nil {
		r.withClause(s.WithClause, sc)
	}
	// The source query sees the WITH items, not the target.
	if s.SelectStmt != nil {
		sel := s.SelectStmt.GetSelectStmt()
		if sel == nil {
			r.fail(errorf(sqlstate.FeatureNotSupported, "unsupported INSERT source"))
			return
		}
		r.selectStatement(sel, &scope{parent: parent, ctes: sc.ctes})
	}
	if r.err != nil {
		return
	}
	target := r.dmlTargetItem(s.Relation, "INSERT")
	if target == nil {
		return
	}
	t := target.ref.dml
	if len(s.Cols) == 0 {
		t.writeAll(target.ref)
	}
	for _, c := range s.Cols {
		t.write(target.ref, c.GetResTarget().GetName())
	}
	if oc := s.OnConflictClause; oc != nil {
		// The arbiter's index expressions name index columns; they read
		// no stored value, and a mask there would defeat the inference.
		r.exprs(&scope{parent: parent, ctes: sc.ctes, items: []*fromItem{{visible: target.visible}}}, oc.Infer)
		ocs := &scope{parent: parent, ctes: sc.ctes, items: []*fromItem{target, {visible: "excluded"}}}
		for _, tl := range oc.TargetList {
			t.write(target.ref, tl.GetResTarget().GetName())
		}
		r.exprs(ocs, oc.TargetList, oc.WhereClause)
	}
	rs := &scope{parent: parent, ctes: sc.ctes, items: []*fromItem{target}}
	t.returning = s.ReturningList
	r.targetList(s.ReturningList)
	r.exprs(rs, s.ReturningList)
}

func (r *stmtRewriter) updateStatement(s *pg.UpdateStmt, parent *scope) {
	sc := &scope{parent: parent}
	if s.WithClause != nil {
		r.withClause(s.WithClause, sc)
	}
	r.dmlFromItems(sc, s.FromClause)
	target := r.dmlTargetItem(s.Relation, "UPDATE")
	if target == nil {
		return
	}
	sc.items = append([]*fromItem{target}, sc.items...)
	r.checkNameConflicts(sc.items)
	for _, tl := range s.TargetList {
		target.ref.dml.write(target.ref, tl.GetResTarget().GetName())
	}
	target.ref.dml.currentOf = hasCurrentOf(s.WhereClause)
	target.ref.dml.returning = s.ReturningList
	r.targetList(s.ReturningList)
	r.exprs(sc, s.TargetList, s.WhereClause, s.ReturningList)
}

func (r *stmtRewriter) deleteStatement(s *pg.DeleteStmt, parent *scope) {
	sc := &scope{parent: parent}
	if s.WithClause != nil {
		r.withClause(s.WithClause, sc)
	}
	r.dmlFromItems(sc, s.UsingClause)
	target := r.dmlTargetItem(s.Relation, "DELETE")
	if target == nil {
		return
	}
	sc.items = append([]*fromItem{target}, sc.items...)
	r.checkNameConflicts(sc.items)
	target.ref.dml.currentOf = hasCurrentOf(s.WhereClause)
	target.ref.dml.returning = s.ReturningList
	r.targetList(s.ReturningList)
	r.exprs(sc, s.WhereClause, s.ReturningList)
}

func (r *stmtRewriter) mergeStatement(s *pg.MergeStmt, parent *scope) {
	sc := &scope{parent: parent}
	if s.WithClause != nil {
		r.withClause(s.WithClause, sc)
	}
	if s.SourceRelation != nil {
		r.dmlFromItems(sc, []*pg.Node{s.SourceRelation})
	}
	target := r.dmlTargetItem(s.Relation, "MERGE")
	if target == nil {
		return
	}
	sc.items = append([]*fromItem{target}, sc.items...)
	r.checkNameConflicts(sc.items)
	t := target.ref.dml
	r.exprs(sc, s.JoinCondition)
	for _, w := range s.MergeWhenClauses {
		wc := w.GetMergeWhenClause()
		if wc == nil {
			r.fail(errorf(sqlstate.FeatureNotSupported, "unexpected MERGE clause"))
			return
		}
		switch wc.CommandType {
		case pg.CmdType_CMD_INSERT:
			if len(wc.TargetList) == 0 {
				t.writeAll(target.ref)
			}
			for _, tl := range wc.TargetList {
				t.write(target.ref, tl.GetResTarget().GetName())
			}
			r.exprs(sc, wc.Condition, wc.Values)
		case pg.CmdType_CMD_UPDATE:
			for _, tl := range wc.TargetList {
				t.write(target.ref, tl.GetResTarget().GetName())
			}
			r.exprs(sc, wc.Condition, wc.TargetList)
		default:
			r.exprs(sc, wc.Condition, wc.TargetList, wc.Values)
		}
	}
	t.returning = s.ReturningList
	r.targetList(s.ReturningList)
	r.exprs(sc, s.ReturningList)
}

// dmlFromItems analyses UPDATE … FROM, DELETE … USING and MERGE … USING
// items, which cannot see the target.
func (r *stmtRewriter) dmlFromItems(sc *scope, items []*pg.Node) {
	for _, item := range items {
		r.fromItem(item, sc, &sc.items)
		if r.err != nil {
			return
		}
	}
}

func hasCurrentOf(n *pg.Node) bool {
	found := false
	if n != nil {
		walkNodes(n, func(x *pg.Node) bool {
			if x.GetCurrentOfExpr() != nil {
				found = true
			}
			return !found
		})
	}
	return found
}

// dmlTargetItem resolves the relation a statement writes, qualified so the
// backend writes exactly the relation that is checked, and records it for
// finishTarget. CTE names do not shadow a target (PostgreSQL resolves a
// target as a relation).
func (r *stmtRewriter) dmlTargetItem(rv *pg.RangeVar, kind string) *fromItem {
	user := r.sess.Subject.User
	if rv == nil {
		r.fail(errorf(sqlstate.FeatureNotSupported, "%s without a target relation", kind))
		return nil
	}
	rel := r.resolveRelation(rv)
	if rel == nil {
		return nil
	}
	if rv.Schemaname == "" {
		rv.Schemaname = rel.Schema
		r.changed = true
	}
	if rv.Catalogname != "" {
		rv.Catalogname = ""
		r.changed = true
	}
	if rel.IsSystem() {
		r.fail(denyf("%s on %s.%s is not allowed through pgranger: system catalogs are not written by clients (user %q)", kind, rel.Schema, rel.Name, user))
		return nil
	}
	switch rel.Kind {
	case catalog.KindTable, catalog.KindPartitionedTable, catalog.KindForeignTable:
	default:
		r.fail(denyf("%s on %s.%s is not allowed through pgranger: only tables are written, not views or materialized views (user %q)", kind, rel.Schema, rel.Name, user))
		return nil
	}
	pol := r.relationPolicy(rel)
	if pol == nil {
		return nil
	}
	ref := &relRef{rel: rel, pol: pol, rv: rv, unaliased: rv.Alias == nil, read: map[int]bool{},
		dml: &dmlTarget{kind: kind, written: map[int]bool{}}, cur: &r.curCol}
	ref.visibleCols = make([]string, len(rel.Columns))
	for i, c := range rel.Columns {
		ref.visibleCols[i] = c.Name
	}
	r.refs = append(r.refs, ref)
	visible := rel.Name
	if rv.Alias != nil {
		visible = rv.Alias.Aliasname
	}
	return &fromItem{visible: visible, ref: ref}
}

func (t *dmlTarget) write(ref *relRef, name string) {
	for i, c := range ref.rel.Columns {
		if c.Name == name {
			t.written[i] = true
		}
	}
	// An unknown column is PostgreSQL's error to report.
}

func (t *dmlTarget) writeAll(ref *relRef) {
	for i := range ref.rel.Columns {
		t.written[i] = true
	}
}

func (t *dmlTarget) writtenColumns() []int {
	out := make([]int, 0, len(t.written))
	for i := range t.written {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// finishTarget checks a DML target (finish): select on what it reads,
// update on the table and on each column written, and the row-filter and
// mask rules of policy.dml-row-filter.
func (r *stmtRewriter) finishTarget(ref *relRef) {
	p, t := ref.pol, ref.dml
	if p.super {
		return
	}
	user := r.sess.Subject.User
	for _, i := range ref.readColumns() {
		if d := p.colAccess[i]; !d.Allowed {
			cr := p.resource
			cr.Column = ref.rel.Columns[i].Name
			r.fail(accessDenied(denial(cr, "select", d),
				"permission denied: user %q has no select access to column %s.%s.%s", user, ref.rel.Schema, ref.rel.Name, cr.Column))
			return
		}
	}
	access := t.access
	if access == "" {
		access = "update"
	}
	t.table = r.access(p.resource, access, nil)
	if !t.table.Allowed {
		r.fail(accessDenied(denial(p.resource, access, t.table),
			"permission denied: user %q has no %s access to table %s.%s (%s)", user, access, ref.rel.Schema, ref.rel.Name, t.kind))
		return
	}
	t.columns = map[int]policy.Decision{}
	for _, i := range t.writtenColumns() {
		cr := p.resource
		cr.Column = ref.rel.Columns[i].Name
		d := r.access(cr, "update", nil)
		t.columns[i] = d
		if !d.Allowed {
			r.fail(accessDenied(denial(cr, "update", d),
				"permission denied: user %q has no update access to column %s.%s.%s (%s)", user, ref.rel.Schema, ref.rel.Name, cr.Column, t.kind))
			return
		}
	}
	hasFilter := len(p.filter.Exprs) > 0
	var masked []string
	for i, m := range p.masks {
		if m.Type != "" {
			masked = append(masked, ref.rel.Columns[i].Name)
		}
	}
	if !hasFilter && len(masked) == 0 || access != "update" && !t.blockIfGoverned {
		return
	}
	what := ""
	switch {
	case hasFilter && len(masked) > 0:
		what = "a row filter and column masks (" + strings.Join(masked, ", ") + ") apply"
	case hasFilter:
		what = "a row filter applies"
	default:
		what = "column masks (" + strings.Join(masked, ", ") + ") apply"
	}
	deny := func(why string) {
		r.fail(&Error{
			Code:    sqlstate.InsufficientPrivilege,
			Message: fmt.Sprintf("pgranger: permission denied: %s on %s.%s is not allowed for user %q: %s to it for this user%s", t.kind, ref.rel.Schema, ref.rel.Name, user, what, why),
			Detail:  fmt.Sprintf("Ranger resource database=%s, table=%s", p.resource.Database, p.resource.Table),
			// Access to the table is granted; its row filter or masks
			// deny the write, so no access policy decided.
			Denied: &Denial{Database: p.resource.Database, Table: p.resource.Table, Access: access},
		})
	}
	switch {
	case t.blockIfGoverned:
		deny(" (as in Hive, it is blocked while a row filter or a mask applies: it evaluates expressions over every stored row)")
		return
	case r.rw.opts.DMLRowFilter != DMLRowFilterApply:
		deny(" (writes to filtered or masked tables are blocked, as in Hive; policy.dml-row-filter = \"apply\" writes through the filter)")
		return
	case t.kind == "MERGE":
		deny(" (MERGE cannot be kept inside a row filter or masks: PostgreSQL 15 cannot MERGE into a security-barrier view; use INSERT, UPDATE and DELETE)")
		return
	case hasFilter && (t.kind == "COPY" || t.kind == "TRUNCATE"):
		deny(fmt.Sprintf(" (%s cannot be checked against the row filter; use INSERT or DELETE)", t.kind))
		return
	}
	if len(masked) > 0 {
		r.maskTargetReads(ref)
		if r.err != nil {
			return
		}
	}
	if hasFilter {
		if t.currentOf {
			deny(" (WHERE CURRENT OF cannot name a row-filtered table)")
			return
		}
		r.dmlView(ref)
	}
}

// maskTargetReads makes every read of a masked target column read the
// masked value (policy.dml-row-filter = "apply"): the column reference
// becomes the mask expression over the target's visible name, as the
// wrapper of a SELECT would compute it.
func (r *stmtRewriter) maskTargetReads(ref *relRef) {
	alias := ref.rel.Name
	if ref.rv.Alias != nil {
		alias = ref.rv.Alias.Aliasname
	}
	byNode := map[*pg.Node][]int{}
	var order []*pg.Node
	for _, cn := range ref.nodes {
		if _, seen := byNode[cn.node]; !seen {
			order = append(order, cn.node)
		}
		byNode[cn.node] = append(byNode[cn.node], cn.col)
	}
	// RETURNING c names its output c; the mask expression keeps that name.
	for _, rt := range ref.dml.returning {
		if t := rt.GetResTarget(); t != nil && t.Name == "" && t.Val != nil {
			if cols, ok := byNode[t.Val]; ok && len(cols) > 0 && cols[0] >= 0 && ref.pol.masks[cols[0]].Type != "" {
				t.Name = ref.rel.Columns[cols[0]].Name
			}
		}
	}
	for _, n := range order {
		cols := byNode[n]
		for _, c := range cols {
			if c < 0 {
				r.fail(denyf("%s of %s.%s: a star or whole-row reference of a table with masked columns for user %q cannot be masked in place; list the columns", ref.dml.kind, ref.rel.Schema, ref.rel.Name, r.sess.Subject.User))
				return
			}
		}
		i := cols[0]
		if ref.pol.masks[i].Type == "" {
			continue
		}
		expr, err := r.maskExprFor(ref, i, QuoteIdent(alias)+"."+QuoteIdent(ref.rel.Columns[i].Name), alias)
		if err != nil {
			r.fail(err)
			return
		}
		n.Node = expr.Node
		r.changed = true
	}
}

// dmlView makes a row-filtered target an automatically updatable
// security-barrier view with CHECK OPTION (see the top of this file).
func (r *stmtRewriter) dmlView(ref *relRef) {
	rel := ref.rel
	targets := make([]*pg.Node, 0, len(rel.Columns))
	for _, c := range rel.Columns {
		targets = append(targets, pg.MakeResTargetNodeWithVal(pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(c.Name)}, -1), -1))
	}
	where := r.rowFilterWhere(ref)
	if r.err != nil {
		return
	}
	sel := &pg.SelectStmt{
		TargetList: targets,
		FromClause: []*pg.Node{{Node: &pg.Node_RangeVar{RangeVar: &pg.RangeVar{
			Schemaname: rel.Schema, Relname: rel.Name, Inh: ref.rv.Inh, Relpersistence: "p", Location: -1,
		}}}},
		WhereClause: where,
		LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT,
		Op:          pg.SetOperation_SETOP_NONE,
	}
	tree := &pg.ParseResult{Version: parseTreeVersion, Stmts: []*pg.RawStmt{{Stmt: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}}}}
	body, err := deparse(tree)
	if err != nil {
		r.fail(errorf(err.Code, "cannot render the row-filter view of %s.%s: %v", rel.Schema, rel.Name, strings.TrimPrefix(err.Message, "pgranger: ")))
		return
	}
	if _, err := parse(body, noLimit, noLimit); err != nil {
		r.fail(unanalysable(sqlstate.FeatureNotSupported, "cannot render the row-filter view of %s.%s as SQL that parses again", rel.Schema, rel.Name))
		return
	}
	sum := sha256.Sum256([]byte("dml\x00" + body))
	name := "pgranger_dml_" + hex.EncodeToString(sum[:10])
	v := View{Name: name, Create: "CREATE OR REPLACE VIEW pg_temp." + name + " WITH (security_barrier = true, check_option = cascaded) AS " + body}
	v.Table, v.Attnums = viewOrigins(ref, sel)
	r.addView(v)
	alias := ref.rv.Alias
	if alias == nil {
		alias = &pg.Alias{Aliasname: rel.Name}
		if !r.stripQualifiedRefs(ref) {
			return
		}
	}
	rv := ref.rv
	rv.Schemaname, rv.Relname, rv.Catalogname, rv.Inh, rv.Alias = "pg_temp", name, "", true, alias
	r.changed = true
}

// viewOrigins are View.Table and View.Attnums of a view over ref whose
// SELECT is sel: one target per column of ref.rel, in order, which is
// the column itself when it is the bare column under its own name and
// computed otherwise (a mask, a typed NULL). A view read through its
// definition (ref.expanded) has no table to report.
func viewOrigins(ref *relRef, sel *pg.SelectStmt) (uint32, []int16) {
	attnums := make([]int16, len(sel.TargetList))
	if ref.expanded != nil {
		return 0, attnums
	}
	for i, t := range sel.TargetList {
		if i >= len(ref.rel.Columns) {
			break
		}
		col := ref.rel.Columns[i]
		rt := t.GetResTarget()
		cr := rt.GetVal().GetColumnRef()
		if cr == nil || len(cr.Fields) != 1 || strVal(cr.Fields[0]) != col.Name || rt.Name != "" && rt.Name != col.Name {
			continue
		}
		attnums[i] = col.Num
	}
	return ref.rel.OID, attnums
}

func (r *stmtRewriter) addView(v View) {
	for _, have := range r.views {
		if have.Name == v.Name {
			return
		}
	}
	r.views = append(r.views, v)
}
