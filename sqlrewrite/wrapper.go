package sqlrewrite

import (
	"errors"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlstate"
)

// wrap replaces a governed reference with
//
//	(SELECT c1, <mask(c2)> AS c2, NULL::t AS c3, … FROM ONLY? s.t [TABLESAMPLE …] WHERE <filter>) AS alias
//
// keeping the visible name (the alias, or the table name) and the column
// list and order, so the rest of the query is unchanged. The filter runs on
// stored values, below the masks, as in Hive; everything above the wrapper
// sees only masked values.
func (r *stmtRewriter) wrap(ref *relRef) {
	rel := ref.rel
	targets := make([]*pg.Node, 0, len(rel.Columns))
	for i := range rel.Columns {
		expr, err := r.columnExpr(ref, i)
		if err != nil {
			r.fail(err)
			return
		}
		name := rel.Columns[i].Name
		if cr := expr.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && strVal(cr.Fields[0]) == name {
			name = "" // the column itself: "id", not "id AS id"
		}
		targets = append(targets, pg.MakeResTargetNodeWithNameAndVal(name, expr, -1))
	}
	base := &pg.Node{Node: &pg.Node_RangeVar{RangeVar: &pg.RangeVar{
		Schemaname:     rel.Schema,
		Relname:        rel.Name,
		Inh:            ref.rv.Inh,
		Relpersistence: "p",
		Location:       -1,
	}}}
	if ref.expanded != nil {
		// A view: the wrapper reads its analysed definition.
		if len(ref.pol.filter.Exprs) > 0 {
			fenceJoinedView(ref.expanded)
		}
		base = &pg.Node{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
			Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: ref.expanded}},
			Alias:    &pg.Alias{Aliasname: rel.Name},
		}}}
	}
	if ref.sample != nil {
		base = &pg.Node{Node: &pg.Node_RangeTableSample{RangeTableSample: &pg.RangeTableSample{
			Relation:   base,
			Method:     ref.sample.Method,
			Args:       ref.sample.Args,
			Repeatable: ref.sample.Repeatable,
			Location:   -1,
		}}}
	}
	sel := &pg.SelectStmt{
		TargetList:  targets,
		FromClause:  []*pg.Node{base},
		LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT,
		Op:          pg.SetOperation_SETOP_NONE,
	}
	sel.WhereClause = keepAtScan(r.rowFilterWhere(ref))
	if r.err != nil {
		return
	}
	alias := ref.rv.Alias
	if alias == nil {
		alias = &pg.Alias{Aliasname: rel.Name}
		if !r.stripQualifiedRefs(ref) {
			return
		}
	}
	r.changed = true
	if sel.WhereClause != nil {
		r.placeBarrier(ref, sel)
		if r.err != nil {
			return
		}
	}
	ref.node.Node = &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
		Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}},
		Alias:    alias,
	}}
}

// rowFilterWhere builds the row filter of a governed reference (nil when
// none applies): every filter expression of the policy, ANDed.
func (r *stmtRewriter) rowFilterWhere(ref *relRef) *pg.Node {
	p, rel := ref.pol, ref.rel
	if len(p.filter.Exprs) == 0 {
		return nil
	}
	var conds []*pg.Node
	for i, text := range p.filter.Exprs {
		sc := exprScope{res: p.resource}
		if i < len(p.filter.Tags) {
			sc.tag = p.filter.Tags[i]
		}
		n, err := r.policyExpr(text, rel, sc)
		if err != nil {
			r.fail(denyf("the row filter on %s.%s cannot be applied (%s): access denied for user %q", rel.Schema, rel.Name, strings.TrimPrefix(err.Message, "pgranger: "), r.sess.Subject.User))
			return nil
		}
		conds = append(conds, n)
	}
	if len(conds) == 1 {
		return conds[0]
	}
	return pg.MakeBoolExprNode(pg.BoolExprType_AND_EXPR, conds, -1)
}

// The row filter is evaluated at the scan of the relation it filters, as
// a qual of that scan, so that every row leaving the scan is one the
// filter keeps and nothing above the scan — a join, a LATERAL subquery, a
// subplan, the inner side of a nested loop — runs or not because of a
// row the filter removes (docs/security.md "The barrier"). Two things
// could lift it above the scan once the wrapper is flattened, and both
// are prevented here.
//
// keepAtScan: PostgreSQL turns a top-level x IN (SELECT …), x op ANY
// (SELECT …), EXISTS (SELECT …) or NOT EXISTS (SELECT …) term of a WHERE
// clause into a semi- or anti-join (pull_up_sublinks), which the planner
// may place above joins with the user's relations. Such a term of the
// filter becomes "(term) IS TRUE" — the same test in a WHERE clause —
// which pull_up_sublinks does not look into: it stays a (hashed) subplan
// in the scan's quals.
func keepAtScan(filter *pg.Node) *pg.Node {
	if filter == nil {
		return nil
	}
	if be := filter.GetBoolExpr(); be != nil && be.Boolop == pg.BoolExprType_AND_EXPR {
		for i, a := range be.Args {
			be.Args[i] = keepAtScan(a)
		}
		return filter
	}
	n := filter
	if be := n.GetBoolExpr(); be != nil && be.Boolop == pg.BoolExprType_NOT_EXPR && len(be.Args) == 1 {
		n = be.Args[0]
	}
	sl := n.GetSubLink()
	if sl == nil || sl.SubLinkType != pg.SubLinkType_ANY_SUBLINK && sl.SubLinkType != pg.SubLinkType_EXISTS_SUBLINK {
		return filter
	}
	return &pg.Node{Node: &pg.Node_BooleanTest{BooleanTest: &pg.BooleanTest{
		Arg: filter, Booltesttype: pg.BoolTestType_IS_TRUE, Location: -1,
	}}}
}

// fenceJoinedView: a filtered view whose definition reads more than one
// relation would, flattened, be a join whose filter is a join qual —
// evaluated above the scans, after the planner may have joined a user's
// relation to one side. Its definition gets OFFSET 0, so the filter is a
// qual of the definition's subquery scan. A definition over one relation
// is flattened into that relation's scan and keeps its indexes.
func fenceJoinedView(def *pg.SelectStmt) {
	if def.Op == pg.SetOperation_SETOP_NONE && len(def.FromClause) == 1 && def.FromClause[0].GetRangeVar() != nil {
		return
	}
	if def.LimitOffset == nil && def.LimitCount == nil {
		def.LimitOffset = pg.MakeAConstIntNode(0, -1)
	}
}

// stripQualifiedRefs turns schema-qualified column references to an
// unaliased relation (s.t.c) into t.c, for a replacement named t. It
// fails (and reports false) when t alone would name another FROM item
// where such a reference stands.
func (r *stmtRewriter) stripQualifiedRefs(ref *relRef) bool {
	rel := ref.rel
	for _, q := range ref.qualifiedRefs {
		if q.shadowed {
			// Stripped to t.c, the reference would read the other
			// item named t, whose columns were never checked for it.
			access := "select"
			if ref.dml != nil {
				access = "update"
			}
			r.fail(errorf(sqlstate.FeatureNotSupported, "a column reference qualified with %s.%s stands where %s names another FROM item; pgranger rewrites %s.%s for user %q (%s) and cannot keep that reference: give the table an alias",
				rel.Schema, rel.Name, rel.Name, rel.Schema, rel.Name, r.sess.Subject.User, access))
			return false
		}
	}
	for _, q := range ref.qualifiedRefs {
		q.cr.Fields = q.cr.Fields[q.strip:]
	}
	return true
}

// placeBarrier applies the barrier decision (barrier.go) to a filtered
// wrapper: the unsafe conjuncts that read only this relation move inside
// under a guard that evaluates them only where the filter holds; a fenced
// wrapper gets OFFSET 0 and the safe conjuncts that read only it.
func (r *stmtRewriter) placeBarrier(ref *relRef, sel *pg.SelectStmt) {
	d := r.barrier().decided[ref]
	if d == nil {
		d = &barrierDecision{fence: true} // not decided: fail towards the fence
	}
	conds := []*pg.Node{sel.WhereClause}
	var hints []*pg.Node
	for _, c := range d.guards {
		// Before moveInto, which rewrites the conjunct's column references.
		hints = append(hints, r.rangeHint(ref, c)...)
		moved := r.moveInto(ref, c)
		filter := r.rowFilterWhere(ref)
		if r.err != nil {
			return
		}
		conds = append(conds, &pg.Node{Node: &pg.Node_CaseExpr{CaseExpr: &pg.CaseExpr{
			Args:      []*pg.Node{{Node: &pg.Node_CaseWhen{CaseWhen: &pg.CaseWhen{Expr: filter, Result: moved, Location: -1}}}},
			Defresult: boolConst(false),
			Location:  -1,
		}}})
	}
	conds = append(conds, hints...)
	for _, c := range d.pushed {
		conds = append(conds, r.moveInto(ref, c))
	}
	if r.err != nil {
		return
	}
	if len(conds) > 1 {
		// One flat AND (the filter may be an AND itself), as PostgreSQL's
		// parser would build it: what is sent must read back the same.
		var flat []*pg.Node
		for _, c := range conds {
			if be := c.GetBoolExpr(); be != nil && be.Boolop == pg.BoolExprType_AND_EXPR {
				flat = append(flat, be.Args...)
			} else {
				flat = append(flat, c)
			}
		}
		sel.WhereClause = pg.MakeBoolExprNode(pg.BoolExprType_AND_EXPR, flat, -1)
	}
	if d.fence {
		sel.LimitOffset = pg.MakeAConstIntNode(0, -1)
	}
}

// moveInto rewrites a conjunct to stand inside ref's wrapper: each of its
// column references (all of them ref's plain columns) becomes the
// wrapper's expression for that column, so it sees the masked value as it
// did outside. The conjunct's place outside is pruned afterwards
// (pruneMoved).
func (r *stmtRewriter) moveInto(ref *relRef, c *conjunct) *pg.Node {
	cols, ok := r.movingCols(c)
	if !ok {
		r.fail(errorf(sqlstate.FeatureNotSupported, "a condition could not be placed under its row filter"))
		return nil
	}
	for _, a := range cols {
		expr, err := r.columnExpr(ref, a.col)
		if err != nil {
			r.fail(err)
			return nil
		}
		a.node.Node = expr.Node
	}
	return &pg.Node{Node: c.node.Node}
}

// pruneMoved drops the conjuncts moved into wrappers from the clauses they
// were in; an ON clause left empty becomes ON true.
func (r *stmtRewriter) pruneMoved() {
	b := r.bar
	if b == nil || len(b.removed) == 0 {
		return
	}
	done := map[**pg.Node]bool{}
	for _, c := range b.conjuncts {
		if !b.removed[c.node] || done[c.owner] {
			continue
		}
		done[c.owner] = true
		*c.owner = pruneAnd(*c.owner, b.removed)
		if *c.owner == nil && c.kind == conjOn {
			*c.owner = boolConst(true)
		}
	}
}

func pruneAnd(n *pg.Node, removed map[*pg.Node]bool) *pg.Node {
	if removed[n] {
		return nil
	}
	be := n.GetBoolExpr()
	if be == nil || be.Boolop != pg.BoolExprType_AND_EXPR {
		return n
	}
	var args []*pg.Node
	for _, a := range be.Args {
		if x := pruneAnd(a, removed); x != nil {
			args = append(args, x)
		}
	}
	switch len(args) {
	case 0:
		return nil
	case 1:
		return args[0]
	}
	be.Args = args
	return n
}

func boolConst(v bool) *pg.Node {
	return &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Val: &pg.A_Const_Boolval{Boolval: &pg.Boolean{Boolval: v}}, Location: -1}}}
}

// View is a temporary security-barrier view with CHECK OPTION that DML
// through a row filter writes to (policy.dml-row-filter = "apply",
// dml.go). The session creates it on its backend connection (Create is
// idempotent) before the statement is sent. Reads never need one.
type View struct {
	Name   string // pg_temp.<Name>
	Create string
	// Table and Attnums are what the view's result columns stand for, so
	// that the session can report them as a direct connection would
	// (RowDescription's table OID and column number): the governed
	// table's OID (0 when the view reads no single catalog relation) and,
	// per view column, the table's attnum when the column is the table's
	// own column unchanged, 0 when it is computed (masked, a typed NULL).
	Table   uint32
	Attnums []int16
}

// LocateSQL asks for the view's OID once it is created (one row, one
// text column), so that the origins of its result columns can be mapped.
func (v *View) LocateSQL() string {
	return "SELECT " + QuoteLiteral("pg_temp."+v.Name) + "::pg_catalog.regclass::pg_catalog.oid"
}

// SetSearchPathSQL is the SET of a search_path given as a startup
// setting's raw text (a,b,"C"), which a rewrite of it checks and whose
// Result.SearchPath is the path the session then resolves names with.
func SetSearchPathSQL(value string) string { return "SET search_path = " + value }

// SetConfigSQL applies a setting's raw text, as postgresql.conf and a
// startup packet give it, for the session (set_config): SET name = 'a,b'
// would make one quoted element of a list setting.
func SetConfigSQL(name, value string) string {
	return "SELECT pg_catalog.set_config(" + QuoteLiteral(name) + ", " + QuoteLiteral(value) + ", false)"
}

// parseTreeVersion is the parse-tree version Deparse expects of a tree
// built by hand.
var parseTreeVersion = func() int32 {
	t, err := parse("SELECT", noLimit, noLimit)
	if err != nil {
		panic(err)
	}
	return t.Version
}()

// columnExpr is the wrapper's expression for column i: the column itself,
// its mask, or a typed NULL for a column the user may not read.
func (r *stmtRewriter) columnExpr(ref *relRef, i int) (*pg.Node, *Error) {
	col := ref.rel.Columns[i]
	if !ref.pol.colAccess[i].Allowed && !ref.trusted {
		return parseExpr(TypedNull(columnType(col)))
	}
	if ref.pol.masks[i].Type == "" {
		return pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(col.Name)}, -1), nil
	}
	return r.maskExprFor(ref, i, QuoteIdent(col.Name), "")
}

// maskExprFor builds the mask of column i of ref over ident (the SQL text
// that reads the stored column). qualifier, when not empty, is the name
// the relation is visible as where the expression stands: the other
// column references of a CUSTOM mask are qualified with it.
func (r *stmtRewriter) maskExprFor(ref *relRef, i int, ident, qualifier string) (*pg.Node, *Error) {
	col := ref.rel.Columns[i]
	ct := columnType(col)
	m := ref.pol.masks[i]
	switch {
	case m.Unmappable:
		return parseExpr(TypedNull(ct))
	case m.Type == ranger.MaskTypeCustom:
		return r.customMask(ref, col, m, qualifier)
	}
	text, err := MaskSQL(m.Type, ct, ident, r.rw.opts.Mask)
	if errors.Is(err, ErrUnmappableMask) {
		return parseExpr(TypedNull(ct))
	}
	if err == nil && !r.snap.HasICU && strings.Contains(text, "und-x-icu") {
		err = errors.New(`the backend has no ICU collation "und-x-icu", which Hive-exact masks need`)
	}
	if err != nil {
		return nil, denyf("mask %s on %s.%s.%s cannot be applied (%v): access denied for user %q", m.Type, ref.rel.Schema, ref.rel.Name, col.Name, err, r.sess.Subject.User)
	}
	if qualifier == "" {
		// A verified stored column holding exactly this text (DML,
		// which qualifies the column, computes the mask).
		if n := storedMaskRef(ref.rel, i, m.Type, text); n != nil {
			return n, nil
		}
	}
	return parseExpr(text)
}

// customMask builds a CUSTOM mask: valueExpr with {col} replaced by the
// quoted column (other bare names refer to the same row), cast back to the
// column's type so its type OID is kept. A null valueExpr means NULL.
func (r *stmtRewriter) customMask(ref *relRef, col catalog.Column, m policy.Mask, qualifier string) (*pg.Node, *Error) {
	ct := columnType(col)
	if strings.TrimSpace(m.ValueExpr) == "" {
		return parseExpr(TypedNull(ct))
	}
	text := strings.ReplaceAll(m.ValueExpr, "{col}", QuoteIdent(col.Name))
	text = strings.ReplaceAll(text, "{colType}", col.TypeName)
	res := ref.pol.resource
	res.Column = col.Name
	expr, err := r.policyExpr(text, ref.rel, exprScope{res: res, tag: m.CurrentTag})
	if err != nil {
		return nil, denyf("custom mask on %s.%s.%s cannot be applied (%s): access denied for user %q", ref.rel.Schema, ref.rel.Name, col.Name, strings.TrimPrefix(err.Message, "pgranger: "), r.sess.Subject.User)
	}
	if qualifier != "" && !qualifyOwnColumns(expr, ref.rel, qualifier) {
		return nil, denyf("custom mask on %s.%s.%s has a subquery, which cannot be placed inside %s; access denied for user %q", ref.rel.Schema, ref.rel.Name, col.Name, ref.dmlKind(), r.sess.Subject.User)
	}
	typ, err := parseTypeName(col.TypeName)
	if err != nil {
		return nil, err
	}
	return &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: expr, TypeName: typ, Location: -1}}}, nil
}

func columnType(c catalog.Column) ColumnType {
	return ColumnType{OID: c.TypeOID, BaseOID: c.BaseOID, TypMod: c.TypMod, SQLName: c.TypeName}
}

// parseExpr parses SQL text that pgranger itself generated as one expression.
func parseExpr(text string) (*pg.Node, *Error) {
	tree, err := parse("SELECT "+text, noLimit, noLimit)
	if err != nil {
		return nil, unanalysable(sqlstate.FeatureNotSupported, "internal expression does not parse: %v", err.Message)
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	return sel.TargetList[0].GetResTarget().Val, nil
}

func parseTypeName(name string) (*pg.TypeName, *Error) {
	n, err := parseExpr("NULL::" + name)
	if err != nil {
		return nil, err
	}
	tc := n.GetTypeCast()
	if tc == nil {
		return nil, unanalysable(sqlstate.FeatureNotSupported, "cannot parse type %s", name)
	}
	return tc.TypeName, nil
}

// QuoteIdent quotes an identifier (always, which is never wrong).
func QuoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// QuoteLiteral makes a standard-conforming string literal.
func QuoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// qualifyOwnColumns qualifies the column references of a policy
// expression over rel (which foreignColumn allows: c, t.c, s.t.c, t) with
// the name the relation is visible as. It reports false when the
// expression has a subquery, whose references it cannot place.
func qualifyOwnColumns(expr *pg.Node, rel *catalog.Relation, qualifier string) bool {
	ok := true
	walkNodes(expr, func(n *pg.Node) bool {
		switch v := n.Node.(type) {
		case *pg.Node_SubLink:
			ok = false
			return false
		case *pg.Node_ColumnRef:
			var names []*pg.Node
			var star *pg.Node
			for _, f := range v.ColumnRef.Fields {
				if f.GetAStar() != nil {
					star = f
				} else {
					names = append(names, f)
				}
			}
			q := pg.MakeStrNode(qualifier)
			switch {
			case star != nil:
				v.ColumnRef.Fields = []*pg.Node{q, star}
			case len(names) == 1 && strVal(names[0]) == rel.Name:
				if _, isCol := rel.Column(rel.Name); !isCol {
					v.ColumnRef.Fields = []*pg.Node{q} // whole row
					break
				}
				v.ColumnRef.Fields = []*pg.Node{q, names[0]}
			case len(names) >= 1:
				v.ColumnRef.Fields = []*pg.Node{q, names[len(names)-1]}
			}
			return false
		}
		return true
	})
	return ok
}
