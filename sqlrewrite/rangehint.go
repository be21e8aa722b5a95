package sqlrewrite

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/pgranger/pgranger/catalog"
)

// Range hints for guarded date conditions (docs/security.md "The
// barrier", docs/performance.md "TPC-H").
//
// The common idiom `d < DATE '1994-01-01' + INTERVAL '1' YEAR` compares a
// date column with a timestamp: `date + interval` is a timestamp, and
// PostgreSQL's date-timestamp comparisons (date_lt_timestamp, …) are not
// marked leakproof, so the condition is guarded (barrier.go): it moves
// into the wrapper as CASE WHEN <filter> THEN d < … ELSE false END. The
// planner sees no range in a CASE: it estimates it at 0.5 and cannot use
// an index on d for it, where on a table without a filter it combines the
// two bounds into one index range scan.
//
// For such a guarded condition the wrapper also gets a condition the
// guarded one implies and that applies only a leakproof operator to the
// column: d <= t::date for d < t and d <= t, d >= t::date for d > t and
// d >= t, d = t::date for d = t. For every date d and timestamp t
// (infinities included; a date past the timestamp range compares greater
// than every finite timestamp), d::timestamp <= t implies d <= the date
// part of t, and d::timestamp >= t implies d >= it, so the hint is true
// wherever the guarded condition is: adding it changes no result. The
// guarded condition stays, and still decides. The hint compares dates
// (date_le, date_ge, date_eq: leakproof), its other side is t, which is
// column-free and not volatile (the condition for a column-free part of
// any safe conjunct), cast to date (immutable): the hint is a safe
// conjunct, which may be evaluated on any row. With two bounds on d the
// planner estimates a range and scans the index for it.

// rangeHint returns the hint for a guarded conjunct of ref, or nil.
func (r *stmtRewriter) rangeHint(ref *relRef, c *conjunct) []*pg.Node {
	e := c.node.GetAExpr()
	if e == nil || e.Lexpr == nil || e.Rexpr == nil {
		return nil
	}
	t := r.typer()
	switch e.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		name, ok := operatorName(e.Name)
		if !ok {
			return nil
		}
		if h := r.dateBound(t, ref, name, e.Lexpr, e.Rexpr); h != nil {
			return []*pg.Node{h}
		}
	case pg.A_Expr_Kind_AEXPR_BETWEEN:
		// d BETWEEN a AND b is d >= a AND d <= b, with the operators of
		// those names (PostgreSQL's transformAExprBetween).
		name, ok := operatorName(e.Name)
		bounds := e.Rexpr.GetList()
		if !ok || name != "BETWEEN" || bounds == nil || len(bounds.Items) != 2 {
			return nil
		}
		var out []*pg.Node
		if h := r.dateBound(t, ref, ">=", e.Lexpr, bounds.Items[0]); h != nil {
			out = append(out, h)
		}
		if h := r.dateBound(t, ref, "<=", e.Lexpr, bounds.Items[1]); h != nil {
			out = append(out, h)
		}
		return out
	}
	return nil
}

// dateBound is the hint for "l op r" when one side is an unmasked date
// column of ref and the other a timestamp value (timestampValue), and op resolves to pg_catalog's date-timestamp comparison.
func (r *stmtRewriter) dateBound(t *exprTyper, ref *relRef, op string, l, rt *pg.Node) *pg.Node {
	col, other := l, rt
	if col.GetColumnRef() == nil {
		col, other = rt, l
		switch op {
		case "<":
			op = ">"
		case "<=":
			op = ">="
		case ">":
			op = "<"
		case ">=":
			op = "<="
		}
	}
	var hint string
	switch op {
	case "<", "<=":
		hint = "<="
	case ">", ">=":
		hint = ">="
	case "=":
		hint = "="
	default:
		return nil
	}
	cr := col.GetColumnRef()
	if cr == nil {
		return nil
	}
	a := r.barrier().cols[cr]
	if a == nil || a.ref != ref || a.col < 0 || a.unsafeValue || a.typ.oid != catalog.OIDDate {
		return nil
	}
	if !t.timestampValue(other) {
		return nil
	}
	// The condition must be pg_catalog's date-timestamp comparison (exact
	// argument types), and the hint's date-date one leakproof.
	if _, ok := t.operator(op, known(catalog.OIDDate), known(catalog.OIDTimestamp)); !ok {
		return nil
	}
	if hop, ok := t.operator(hint, known(catalog.OIDDate), known(catalog.OIDDate)); !ok || !hop.Leakproof || hop.Volatility == catalog.Volatile {
		return nil
	}
	if _, ok := t.b.TypeOID("date"); !ok {
		return nil
	}
	// The column as the wrapper reads it: the plain column (a masked or
	// denied column is not a plain date, so it gets no hint).
	expr, err := r.columnExpr(ref, a.col)
	if err != nil || expr.GetColumnRef() == nil {
		return nil
	}
	cast := &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{
		Arg:      proto.Clone(other).(*pg.Node),
		TypeName: &pg.TypeName{Names: []*pg.Node{pg.MakeStrNode("pg_catalog"), pg.MakeStrNode("date")}, Typemod: -1, Location: -1},
		Location: -1,
	}}}
	return pg.MakeAExprNode(pg.A_Expr_Kind_AEXPR_OP, []*pg.Node{pg.MakeStrNode(hint)}, expr, cast, -1)
}

// timestampValue reports whether n is a timestamp whose cast to date
// cannot fail on any row: a constant PostgreSQL folds at plan time, or a
// value fixed for the statement — LOCALTIMESTAMP, or a parameter of type
// timestamp (declared so, or undeclared and cast, which makes PostgreSQL
// read it as a timestamp at Bind). date(timestamp) is immutable and
// total (every timestamp has a date), so the hint is a safe conjunct
// (docs/security.md "The barrier", range hints).
func (t *exprTyper) timestampValue(n *pg.Node) bool {
	if t.typeOf(n).oid != catalog.OIDTimestamp {
		return false
	}
	if t.planConstant(n) {
		return true
	}
	switch v := n.Node.(type) {
	case *pg.Node_SqlvalueFunction:
		op := v.SqlvalueFunction.Op
		return op == pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP || op == pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N
	case *pg.Node_ParamRef:
		return true // typeOf: declared timestamp
	case *pg.Node_TypeCast:
		p := v.TypeCast.Arg.GetParamRef()
		return p != nil && len(v.TypeCast.TypeName.GetTypmods()) == 0 && t.typeOf(v.TypeCast.Arg).oid == catalog.OIDUnknown
	}
	return false
}
