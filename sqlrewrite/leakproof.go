package sqlrewrite

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
)

// Leakproofness of user predicates (docs/security.md "The barrier").
//
// The barrier rule needs to know whether PostgreSQL could evaluate a
// predicate on a row the row filter removes without anything about that
// row becoming observable. That holds when every function the predicate
// applies to a column value is leakproof (pg_proc.proleakproof) — the
// same test PostgreSQL applies before it pushes a qual into a
// security-barrier view — and nothing in it is volatile.
//
// The rewriter sees the raw parse tree, in which operators and functions
// are names. A name is resolved here only where PostgreSQL's own
// resolution is certain to pick the same pg_catalog entry: an operator
// with exactly the argument types (an untyped literal or parameter taking
// the other side's type, a domain its base type, varchar text), absent
// from every other schema. Anything else is "not known to be leakproof",
// which is always safe: it only moves the predicate behind the guard or the
// fence (barrier.go).

// exprTyper types the expressions of one statement.
type exprTyper struct {
	b      *catalog.Builtins
	cols   map[*pg.ColumnRef]*colAttr
	params []uint32 // declared types of $1…$n (0 or missing: unknown)
	// literals: $1…$n are a statement's literals (its literal template),
	// constants for the planner.
	literals bool
	// correlated reports whether a sublink's query reads a column of an
	// enclosing level (then it runs per row; else it is an initplan,
	// whose value is a parameter of the level).
	correlated func(*pg.SubLink) bool
	sublinks   map[*pg.SubLink]*scope // the level of each sublink's query
}

// typ is an expression's type: oid 0 means "not known"; catalog.OIDUnknown
// is PostgreSQL's unknown (an untyped literal or parameter). base is the
// base type of a domain (== oid otherwise).
type typ struct{ oid, base uint32 }

func known(oid uint32) typ { return typ{oid, oid} }

// typeOf infers the type of a user expression where it is certain.
func (t *exprTyper) typeOf(n *pg.Node) typ {
	if n == nil {
		return typ{}
	}
	switch v := n.Node.(type) {
	case *pg.Node_ColumnRef:
		if a := t.cols[v.ColumnRef]; a != nil {
			return a.typ
		}
	case *pg.Node_AConst:
		return known(constType(v.AConst))
	case *pg.Node_ParamRef:
		i := int(v.ParamRef.Number) - 1
		if i >= 0 && i < len(t.params) && t.params[i] != 0 {
			return known(t.params[i])
		}
		return known(catalog.OIDUnknown)
	case *pg.Node_TypeCast:
		if oid, ok := t.typeName(v.TypeCast.TypeName); ok {
			return known(oid)
		}
	case *pg.Node_CollateClause:
		return t.typeOf(v.CollateClause.Arg)
	case *pg.Node_AExpr:
		e := v.AExpr
		switch e.Kind {
		case pg.A_Expr_Kind_AEXPR_OP:
			name, ok := operatorName(e.Name)
			if !ok {
				return typ{}
			}
			var l typ
			if e.Lexpr != nil {
				if l = t.typeOf(e.Lexpr); l.oid == 0 {
					return typ{}
				}
			}
			if op, ok := t.operator(name, l, t.typeOf(e.Rexpr)); ok {
				return known(op.Result)
			}
		case pg.A_Expr_Kind_AEXPR_NULLIF:
			return t.typeOf(e.Lexpr)
		default:
			return known(catalog.OIDBool)
		}
	case *pg.Node_BoolExpr, *pg.Node_NullTest, *pg.Node_BooleanTest:
		return known(catalog.OIDBool)
	case *pg.Node_CoalesceExpr:
		return t.commonType(v.CoalesceExpr.Args)
	case *pg.Node_SqlvalueFunction:
		switch v.SqlvalueFunction.Op {
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return known(catalog.OIDDate)
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:
			return known(catalog.OIDTimeTZ)
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
			return known(catalog.OIDTimestampTZ)
		case pg.SQLValueFunctionOp_SVFOP_LOCALTIME, pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
			return known(catalog.OIDTime)
		case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
			return known(catalog.OIDTimestamp)
		}
	case *pg.Node_FuncCall:
		if fn, ok := t.function(v.FuncCall); ok && !fn.RetSet {
			return known(fn.Result)
		}
	case *pg.Node_SubLink:
		switch v.SubLink.SubLinkType {
		case pg.SubLinkType_EXPR_SUBLINK:
			if sc := t.sublinks[v.SubLink]; sc != nil && sc.outsKnown && len(sc.outs) == 1 {
				return sc.outs[0].typ
			}
		case pg.SubLinkType_EXISTS_SUBLINK, pg.SubLinkType_ANY_SUBLINK, pg.SubLinkType_ALL_SUBLINK:
			return known(catalog.OIDBool)
		}
	}
	return typ{}
}

// constType is the type PostgreSQL gives a literal: integer, bigint or
// numeric for numbers, unknown for strings and NULL.
func constType(c *pg.A_Const) uint32 {
	switch {
	case c.Isnull:
		return catalog.OIDUnknown
	case c.GetIval() != nil:
		return catalog.OIDInt4
	case c.GetFval() != nil:
		s := c.GetFval().Fval
		if strings.ContainsAny(s, ".eE") {
			return catalog.OIDNumeric
		}
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return catalog.OIDInt8
		}
		return catalog.OIDNumeric
	case c.GetSval() != nil:
		return catalog.OIDUnknown
	case c.GetBoolval() != nil:
		return catalog.OIDBool
	}
	return 0
}

// typeName resolves a type name to a pg_catalog type (arrays included).
func (t *exprTyper) typeName(tn *pg.TypeName) (uint32, bool) {
	if tn == nil || tn.Setof || tn.PctType {
		return 0, false
	}
	names := nameList(tn.Names)
	switch {
	case len(names) == 2 && names[0] == "pg_catalog":
	case len(names) == 1:
	default:
		return 0, false
	}
	name := names[len(names)-1]
	if len(tn.ArrayBounds) > 0 {
		name = "_" + name
	}
	return t.b.TypeOID(name)
}

// operatorName is the name of an operator reference: a bare name or one
// qualified with pg_catalog (checkOperator refuses other schemas).
func operatorName(names []*pg.Node) (string, bool) {
	switch l := nameList(names); {
	case len(l) == 1:
		return l[0], true
	case len(l) == 2 && l[0] == "pg_catalog":
		return l[1], true
	}
	return "", false
}

// operator resolves an operator the way PostgreSQL's exact-match steps do
// (docs: "Type Conversion — Operators" 2.a and 2.b): an unknown argument
// takes the other side's type; failing an exact match, a domain is its
// base type and varchar (which has no comparison operators of its own)
// is text. left is the zero typ for a prefix operator.
func (t *exprTyper) operator(name string, left, right typ) (catalog.Operator, bool) {
	if right.oid == 0 {
		return catalog.Operator{}, false
	}
	prefix := left == typ{}
	if !prefix {
		switch {
		case left.oid == catalog.OIDUnknown && right.oid == catalog.OIDUnknown:
			return catalog.Operator{}, false
		case left.oid == catalog.OIDUnknown:
			left = right
		case right.oid == catalog.OIDUnknown:
			right = left
		}
	} else if right.oid == catalog.OIDUnknown {
		return catalog.Operator{}, false
	}
	if op, ok := t.b.Operator(name, left.oid, right.oid); ok {
		return op, true
	}
	l, r := left.base, right.base
	if !prefix && (l == catalog.OIDVarchar || r == catalog.OIDVarchar) {
		if isTextLike(l) && isTextLike(r) {
			l, r = catalog.OIDText, catalog.OIDText
		}
	}
	if l == left.oid && r == right.oid {
		return catalog.Operator{}, false
	}
	if prefix {
		l = 0
	}
	return t.b.Operator(name, l, r)
}

func isTextLike(oid uint32) bool { return oid == catalog.OIDText || oid == catalog.OIDVarchar }

// function resolves a call of a pg_catalog function whose argument types
// are all known and match one overload exactly.
func (t *exprTyper) function(fc *pg.FuncCall) (catalog.Function, bool) {
	names := nameList(fc.Funcname)
	if len(names) != 2 || names[0] != "pg_catalog" || fc.AggStar || fc.AggDistinct || fc.FuncVariadic || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		return catalog.Function{}, false
	}
	args := make([]uint32, len(fc.Args))
	for i, a := range fc.Args {
		if a.GetNamedArgExpr() != nil {
			return catalog.Function{}, false
		}
		at := t.typeOf(a)
		if at.oid == 0 || at.oid == catalog.OIDUnknown {
			return catalog.Function{}, false
		}
		args[i] = at.oid
	}
	for _, fn := range t.b.Functions(names[1]) {
		if !fn.Variadic && equalOIDs(fn.Args, args) {
			return fn, true
		}
	}
	return catalog.Function{}, false
}

func equalOIDs(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// volatile reports whether a column-free expression may call a volatile
// function (or one that cannot be resolved, which might be).
func (t *exprTyper) volatile(n *pg.Node) bool {
	vol := false
	walkNodes(n, func(x *pg.Node) bool {
		switch v := x.Node.(type) {
		case *pg.Node_FuncCall:
			names := nameList(v.FuncCall.Funcname)
			if len(names) != 2 || names[0] != "pg_catalog" {
				vol = true
				break
			}
			fns := t.b.Functions(names[1])
			if len(fns) == 0 {
				vol = true
			}
			for _, fn := range fns {
				if fn.Volatility == catalog.Volatile {
					vol = true
				}
			}
		case *pg.Node_AExpr:
			if name, ok := operatorName(v.AExpr.Name); ok && v.AExpr.Kind == pg.A_Expr_Kind_AEXPR_OP {
				var l typ
				if v.AExpr.Lexpr != nil {
					l = t.typeOf(v.AExpr.Lexpr)
				}
				if op, ok := t.operator(name, l, t.typeOf(v.AExpr.Rexpr)); !ok || op.Volatility == catalog.Volatile {
					vol = true
				}
			}
		case *pg.Node_SubLink:
			// An uncorrelated sublink is an initplan: its value is a
			// parameter of this level. What it reads is its own level's
			// business (its quals are conjuncts of their own).
			return false
		}
		return !vol
	})
	return vol
}

// safe reports whether evaluating n on any row — one the row filter
// removes included, in any order relative to the other quals — can have
// no observable effect: no error, no notice, no wait, and nothing else
// run or not run because of it. Its result may decide whether the next
// qual, or the next arm of an AND, OR or CASE, is evaluated at all, so
// every part of it must be free of effects, not only the parts that read
// the row (docs/security.md "The barrier"). It holds for an expression
// built only from
//
//   - the row's plain columns, extended-protocol parameters, and the
//     SQL value functions (CURRENT_DATE, CURRENT_USER, …), values fixed
//     for the statement that cannot fail;
//   - constant subexpressions PostgreSQL folds while planning
//     (planConstant): whatever they raise, they raise before any row is
//     read, on every execution alike;
//   - known leakproof, non-volatile pg_catalog operators, and casts that
//     change nothing (to the same type without a type modifier, varchar
//     to text);
//   - AND, OR, NOT, IS [NOT] NULL, IS TRUE/FALSE, searched CASE,
//     COALESCE and NULLIF (through a leakproof "=") over such parts.
//
// Anything else is not safe: a sublink of any kind (an uncorrelated one
// is an initplan, evaluated lazily the first time a row reaches it), a
// stable or volatile function even without column inputs (evaluated per
// row), any function that is not leakproof applied to a value that is not
// a plan-time constant, a cast that can fail or has a type modifier, a
// set-returning function.
func (t *exprTyper) safe(n *pg.Node) bool {
	if n == nil || t.planConstant(n) {
		return true
	}
	switch v := n.Node.(type) {
	case *pg.Node_ColumnRef:
		// A plain value; a computed column of a level the planner may
		// pull up is the expression it stands for.
		a := t.cols[v.ColumnRef]
		return a != nil && !a.unsafeValue
	case *pg.Node_ParamRef, *pg.Node_AConst, *pg.Node_SqlvalueFunction:
		return true
	case *pg.Node_BoolExpr:
		return t.allSafe(v.BoolExpr.Args)
	case *pg.Node_NullTest:
		return t.safe(v.NullTest.Arg)
	case *pg.Node_BooleanTest:
		return t.safe(v.BooleanTest.Arg)
	case *pg.Node_CollateClause:
		return t.safe(v.CollateClause.Arg)
	case *pg.Node_TypeCast:
		// Only a cast that changes nothing (to the same type, or varchar
		// to text, which is binary) applies no function; a type modifier
		// (numeric(4,0), varchar(3), timestamp(0)) applies a length
		// coercion that can fail or round.
		if len(v.TypeCast.TypeName.GetTypmods()) > 0 {
			return false
		}
		if v.TypeCast.Arg.GetParamRef() != nil && t.typeOf(v.TypeCast.Arg).oid == catalog.OIDUnknown {
			// An undeclared parameter cast to a type is a parameter of
			// that type: PostgreSQL reads its value at Bind.
			return t.typeOf(n).oid != 0
		}
		from, to := t.typeOf(v.TypeCast.Arg), t.typeOf(n)
		if from.oid == 0 || to.oid == 0 || !(from.oid == to.oid || from.oid == catalog.OIDVarchar && to.oid == catalog.OIDText) {
			return false
		}
		return t.safe(v.TypeCast.Arg)
	case *pg.Node_CaseExpr:
		c := v.CaseExpr
		if c.Arg != nil { // CASE x WHEN v compares with an implicit "="
			return false
		}
		for _, w := range c.Args {
			cw := w.GetCaseWhen()
			if cw == nil || !t.safe(cw.Expr) || !t.safe(cw.Result) {
				return false
			}
		}
		return t.safe(c.Defresult)
	case *pg.Node_CoalesceExpr:
		return t.commonType(v.CoalesceExpr.Args).oid != 0 && t.allSafe(v.CoalesceExpr.Args)
	case *pg.Node_AExpr:
		return t.safeAExpr(v.AExpr)
	}
	return false
}

// commonType is the type of COALESCE's arguments when they need no
// conversion: all of one type, or untyped literals (which take it).
func (t *exprTyper) commonType(args []*pg.Node) typ {
	var common typ
	for _, a := range args {
		at := t.typeOf(a)
		switch {
		case at.oid == 0:
			return typ{}
		case at.oid == catalog.OIDUnknown:
		case common.oid == 0:
			common = at
		case common != at:
			return typ{}
		}
	}
	return common
}

func (t *exprTyper) allSafe(ns []*pg.Node) bool {
	for _, n := range ns {
		if !t.safe(n) {
			return false
		}
	}
	return true
}

// planConstant reports whether n is certain to be folded into a constant
// when PostgreSQL plans the statement (eval_const_expressions folds every
// immutable function and operator whose arguments are all constants, in
// every arm of a CASE too): literals, string literals cast to a type (the
// parser converts those itself), and immutable pg_catalog operators and
// functions of such constants, combined with AND, OR, NOT, CASE,
// COALESCE, NULL tests and ARRAY[…]. Whatever error such an expression
// raises, it raises at plan time, before any row is read; on a row it is
// a value. A parameter is not a constant (a generic plan evaluates
// expressions over it on every row) unless it is the placeholder of a
// literal, nor is a sublink, a stable function or a column.
func (t *exprTyper) planConstant(n *pg.Node) bool {
	ok := true
	walkNodes(n, func(x *pg.Node) bool {
		if !ok {
			return false
		}
		switch v := x.Node.(type) {
		case *pg.Node_AConst, *pg.Node_BoolExpr, *pg.Node_NullTest, *pg.Node_BooleanTest, *pg.Node_CaseExpr,
			*pg.Node_CaseWhen, *pg.Node_CollateClause, *pg.Node_CoalesceExpr, *pg.Node_AArrayExpr, *pg.Node_List,
			*pg.Node_String_: // a name (of a function, operator or collation)
		case *pg.Node_ParamRef:
			ok = t.literals
		case *pg.Node_TypeCast:
			ok = t.stringLiteral(v.TypeCast.Arg) && !v.TypeCast.TypeName.GetSetof()
			return false // the literal and the type name: nothing else to look at
		case *pg.Node_AExpr:
			ok = t.immutableOperator(v.AExpr)
		case *pg.Node_FuncCall:
			ok = t.immutableFunction(v.FuncCall)
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// stringLiteral reports whether n is a string literal or NULL (the
// parser converts such a literal cast to a type with the type's input
// function itself) — in a literal template, the placeholder of one.
func (t *exprTyper) stringLiteral(n *pg.Node) bool {
	if c := n.GetAConst(); c != nil {
		return c.Isnull || c.GetSval() != nil
	}
	if p := n.GetParamRef(); p != nil && t.literals {
		return t.typeOf(n).oid == catalog.OIDUnknown
	}
	return false
}

// immutableOperator reports whether every operator an A_Expr applies is
// certainly immutable: an operator call resolved exactly, or, for the
// other forms (IN, BETWEEN, LIKE, IS DISTINCT FROM, NULLIF, ANY/ALL),
// every pg_catalog operator of the name(s) it uses.
func (t *exprTyper) immutableOperator(e *pg.A_Expr) bool {
	name, ok := operatorName(e.Name)
	if !ok {
		return false
	}
	if e.Kind == pg.A_Expr_Kind_AEXPR_OP {
		var l typ
		if e.Lexpr != nil {
			if l = t.typeOf(e.Lexpr); l.oid == 0 {
				return false
			}
		}
		op, ok := t.operator(name, l, t.typeOf(e.Rexpr))
		return ok && op.Volatility == catalog.Immutable
	}
	names := []string{name}
	switch e.Kind {
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_BETWEEN_SYM:
		names = []string{">=", "<="}
	case pg.A_Expr_Kind_AEXPR_NOT_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		names = []string{"<", ">"}
	}
	for _, n := range names {
		if t.b.OperatorVolatility(n) != catalog.Immutable {
			return false
		}
	}
	return true
}

// immutableFunction reports whether a call is certainly of an immutable
// pg_catalog function returning one value: every overload of its name is.
func (t *exprTyper) immutableFunction(fc *pg.FuncCall) bool {
	names := nameList(fc.Funcname)
	if len(names) != 2 || names[0] != "pg_catalog" || fc.AggStar || fc.AggDistinct || fc.Over != nil ||
		len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.AggWithinGroup || t.b.IsAggregate(names[1]) {
		return false
	}
	fns := t.b.Functions(names[1])
	for _, fn := range fns {
		if fn.Volatility != catalog.Immutable || fn.RetSet {
			return false
		}
	}
	return len(fns) > 0
}

// leakproofOp reports whether the operator name applied to l and r is a
// known leakproof one.
func (t *exprTyper) leakproofOp(names []*pg.Node, l, r typ) bool {
	name, ok := operatorName(names)
	if !ok {
		return false
	}
	op, ok := t.operator(name, l, r)
	return ok && op.Leakproof && op.Volatility != catalog.Volatile
}

func (t *exprTyper) safeAExpr(e *pg.A_Expr) bool {
	switch e.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		var l typ
		if e.Lexpr != nil {
			l = t.typeOf(e.Lexpr)
			if l.oid == 0 {
				return false
			}
		}
		return t.leakproofOp(e.Name, l, t.typeOf(e.Rexpr)) && t.safe(e.Lexpr) && t.safe(e.Rexpr)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT, pg.A_Expr_Kind_AEXPR_NULLIF,
		pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		// IS [NOT] DISTINCT FROM and NULLIF call the "=" operator named;
		// [I]LIKE is the operator ~~ (~~*) or its negation.
		return t.leakproofOp(e.Name, t.typeOf(e.Lexpr), t.typeOf(e.Rexpr)) && t.safe(e.Lexpr) && t.safe(e.Rexpr)
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		bounds := e.Rexpr.GetList()
		if bounds == nil || len(bounds.Items) != 2 {
			return false
		}
		lo, hi := ">=", "<="
		if e.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			lo, hi = "<", ">"
		}
		x := t.typeOf(e.Lexpr)
		if x.oid == 0 {
			return false
		}
		return t.leakproofOp([]*pg.Node{pg.MakeStrNode(lo)}, x, t.typeOf(bounds.Items[0])) &&
			t.leakproofOp([]*pg.Node{pg.MakeStrNode(hi)}, x, t.typeOf(bounds.Items[1])) &&
			t.safe(e.Lexpr) && t.safe(bounds.Items[0]) && t.safe(bounds.Items[1])
	case pg.A_Expr_Kind_AEXPR_IN:
		list := e.Rexpr.GetList()
		if list == nil {
			return false
		}
		return t.safeMembership(e.Name, e.Lexpr, list.Items)
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		if arr := e.Rexpr.GetAArrayExpr(); arr != nil {
			return t.safeMembership(e.Name, e.Lexpr, arr.Elements)
		}
		// x = ANY($1) / ANY('{…}'::int[]): the array's element type.
		at := t.typeOf(e.Rexpr)
		var elem typ
		switch {
		case at.oid == catalog.OIDUnknown:
			elem = at
		case at.oid != 0:
			if el, ok := t.b.ElemType(at.oid); ok {
				elem = known(el)
			}
		}
		x := t.typeOf(e.Lexpr)
		return x.oid != 0 && elem.oid != 0 && t.leakproofOp(e.Name, x, elem) && t.safe(e.Lexpr) && t.safe(e.Rexpr)
	}
	return false
}

// safeMembership covers x IN (a, b, …) and x op ANY (ARRAY[a, b, …]).
// PostgreSQL compares x with the list's common type; the list is taken
// only where that type is certain: every element untyped or of x's type,
// or integers of which the widest decides.
func (t *exprTyper) safeMembership(names []*pg.Node, x *pg.Node, items []*pg.Node) bool {
	xt := t.typeOf(x)
	if xt.oid == 0 || xt.oid == catalog.OIDUnknown || len(items) == 0 || !t.safe(x) {
		return false
	}
	common := xt
	for _, it := range items {
		et := t.typeOf(it)
		switch {
		case et.oid == catalog.OIDUnknown || et.oid == xt.oid:
		case intRank(et.oid) > 0 && intRank(xt.oid) > 0:
			if intRank(et.oid) > intRank(common.oid) {
				common = et
			}
		default:
			return false
		}
		if !t.safe(it) {
			return false
		}
	}
	return t.leakproofOp(names, xt, common)
}

func intRank(oid uint32) int {
	switch oid {
	case catalog.OIDInt2:
		return 1
	case catalog.OIDInt4:
		return 2
	case catalog.OIDInt8:
		return 3
	}
	return 0
}
