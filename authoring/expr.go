package authoring

import (
	"regexp"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

// The portable subset (docs/policy-semantics.md, "Expressions written
// through pgranger"). A row filter's USING and a CUSTOM mask's expression
// are stored as text and evaluated by every engine reading the service in
// its own dialect — HiveQL, Spark SQL, PostgreSQL — so what pgranger writes
// must mean the same thing in all three. This file accepts only that, and
// prints it in one canonical spelling; anything else is refused naming the
// construct, never written:
//
//	column references        unqualified, lower-case simple names
//	literals                 integers, decimals, 'strings' without quotes,
//	                         backslashes or control characters, TRUE, FALSE, NULL
//	comparisons              =  <>  <  >  <=  >=  (!= is written <>)
//	arithmetic               +  -  *  %        (not /: integer division differs)
//	logic                    AND  OR  NOT
//	predicates               IS [NOT] NULL, [NOT] IN (list), [NOT] LIKE 'pattern',
//	                         [NOT] BETWEEN a AND b
//	CASE                     CASE [x] WHEN … THEN … [ELSE …] END
//	CAST(x AS t)             t one of INT, BIGINT, SMALLINT, BOOLEAN, DATE,
//	                         TIMESTAMP, DECIMAL(p,s), VARCHAR(n), CHAR(n)
//	functions                lower, upper, trim, ltrim, rtrim, length, abs,
//	                         coalesce, current_date, current_timestamp
//	current_user, session_user, user   the session's user: Ranger's macro
//	                         '${{USER._name}}', which every engine expands
//
// Refused, among others: :: casts, ILIKE, SIMILAR TO, regular-expression
// operators, ||, /, IS DISTINCT FROM, subqueries, $n parameters, arrays,
// COLLATE, qualified or quoted names, schema-qualified and other functions.

// userMacro is what current_user becomes: Ranger expands it to the user's
// name in HiveServer2 and Spark, and pgranger does the same.
const userMacro = "'${{USER._name}}'"

var simpleName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// exprPrinter prints one expression of the portable subset.
type exprPrinter struct {
	src string // the statement text, for telling CAST from ::
	// placeholder stands for {col} in a CUSTOM mask's expression (printed
	// back as {col}); "" in a row filter.
	placeholder string
	// columns, when set, are the table's columns: another name is 42703.
	columns map[string]bool
	table   string // for messages
	b       strings.Builder
}

// portable prints n, or refuses it naming the first construct outside
// the subset.
func portable(n *pg.Node, src, placeholder string, columns map[string]bool, table string) (string, *sqlrewrite.Error) {
	p := &exprPrinter{src: src, placeholder: placeholder, columns: columns, table: table}
	if err := p.expr(n); err != nil {
		return "", err
	}
	return p.b.String(), nil
}

func refuse(construct, why string) *sqlrewrite.Error {
	e := unsupported("%s is not allowed in a policy expression: HiveServer2 and Spark read the same policy and %s", construct, why)
	e.Hint = "docs/policy-semantics.md lists what a policy written through pgranger may use."
	return e
}

// Precedence, as HiveQL, Spark SQL and PostgreSQL agree on it: OR, AND,
// NOT, comparisons and predicates, + and -, * and %, unary minus, then
// everything that delimits itself (names, literals, calls, CASE). An
// operand of lower precedence than its place wants is parenthesised;
// where the dialects differ (HiveQL binds IS NULL tighter than
// arithmetic), the operand must be self-delimiting.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCompare
	precAdd
	precMul
	precUnary
	precLeaf
)

func prec(n *pg.Node) int {
	switch v := n.Node.(type) {
	case *pg.Node_BoolExpr:
		switch v.BoolExpr.Boolop {
		case pg.BoolExprType_OR_EXPR:
			return precOr
		case pg.BoolExprType_AND_EXPR:
			return precAnd
		}
		return precNot
	case *pg.Node_AExpr:
		if v.AExpr.Kind != pg.A_Expr_Kind_AEXPR_OP {
			return precCompare
		}
		switch op := opName(v.AExpr.Name); {
		case v.AExpr.Lexpr == nil:
			return precUnary
		case op == "+" || op == "-":
			return precAdd
		case op == "*" || op == "%":
			return precMul
		}
		return precCompare
	case *pg.Node_NullTest:
		return precCompare
	}
	return precLeaf
}

// operand prints n, in parentheses when its precedence is below need.
func (p *exprPrinter) operand(n *pg.Node, need int) *sqlrewrite.Error {
	if n == nil {
		return unsupported("an expression is missing")
	}
	if prec(n) >= need {
		return p.expr(n)
	}
	p.b.WriteByte('(')
	if err := p.expr(n); err != nil {
		return err
	}
	p.b.WriteByte(')')
	return nil
}

func (p *exprPrinter) list(items []*pg.Node) *sqlrewrite.Error {
	for i, it := range items {
		if i > 0 {
			p.b.WriteString(", ")
		}
		if err := p.expr(it); err != nil {
			return err
		}
	}
	return nil
}

func (p *exprPrinter) expr(n *pg.Node) *sqlrewrite.Error {
	switch v := n.Node.(type) {
	case *pg.Node_ColumnRef:
		return p.column(v.ColumnRef)
	case *pg.Node_AConst:
		return p.constant(v.AConst)
	case *pg.Node_AExpr:
		return p.aexpr(v.AExpr)
	case *pg.Node_BoolExpr:
		return p.boolExpr(v.BoolExpr)
	case *pg.Node_NullTest:
		if err := p.operand(v.NullTest.Arg, precLeaf); err != nil {
			return err
		}
		if v.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			p.b.WriteString(" IS NOT NULL")
		} else {
			p.b.WriteString(" IS NULL")
		}
		return nil
	case *pg.Node_TypeCast:
		return p.cast(v.TypeCast)
	case *pg.Node_FuncCall:
		return p.funcCall(v.FuncCall)
	case *pg.Node_SqlvalueFunction:
		switch v.SqlvalueFunction.Op {
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_SESSION_USER, pg.SQLValueFunctionOp_SVFOP_USER:
			p.b.WriteString(userMacro)
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			p.b.WriteString("current_date")
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:
			p.b.WriteString("current_timestamp")
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
			return refuse("current_role", "have no session role")
		default:
			name := strings.ToLower(strings.TrimPrefix(v.SqlvalueFunction.Op.String(), "SVFOP_"))
			return refuse(name, "do not have it")
		}
		return nil
	case *pg.Node_CaseExpr:
		return p.caseExpr(v.CaseExpr)
	case *pg.Node_CoalesceExpr:
		p.b.WriteString("coalesce(")
		if err := p.list(v.CoalesceExpr.Args); err != nil {
			return err
		}
		p.b.WriteByte(')')
		return nil
	case *pg.Node_SubLink:
		return refuse("a subquery", "would read it with their own names and access checks")
	case *pg.Node_ParamRef:
		return refuse("a $n parameter", "have no parameters to bind")
	case *pg.Node_AArrayExpr:
		return refuse("an ARRAY", "spell arrays differently")
	case *pg.Node_CollateClause:
		return refuse("COLLATE", "have other collations")
	case *pg.Node_BooleanTest:
		return refuse("IS TRUE / IS FALSE / IS UNKNOWN", "do not all have it")
	case *pg.Node_AIndirection:
		return refuse("a field or subscript selection", "spell it differently")
	case *pg.Node_RowExpr:
		return refuse("a row constructor", "do not have it")
	case *pg.Node_MinMaxExpr:
		return refuse("GREATEST / LEAST", "treat NULL arguments differently")
	}
	return refuse("this kind of expression", "may not read it the same way")
}

func (p *exprPrinter) column(c *pg.ColumnRef) *sqlrewrite.Error {
	if len(c.Fields) != 1 || c.Fields[0].GetString_() == nil {
		return refuse("a qualified column reference or *", "qualify with their own names")
	}
	name := c.Fields[0].GetString_().Sval
	if p.placeholder != "" && name == p.placeholder {
		p.b.WriteString("{col}")
		return nil
	}
	if !simpleName.MatchString(name) {
		return refuse("the quoted name "+strconv.Quote(name), "quote names differently (PostgreSQL \"x\", HiveQL and Spark `x`)")
	}
	if p.columns != nil && !p.columns[name] {
		return errorf(sqlstate.UndefinedColumn, "column %q does not exist in %s", name, p.table)
	}
	p.b.WriteString(name)
	return nil
}

func (p *exprPrinter) constant(c *pg.A_Const) *sqlrewrite.Error {
	if c.Isnull {
		p.b.WriteString("NULL")
		return nil
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		p.b.WriteString(strconv.FormatInt(int64(v.Ival.Ival), 10))
	case *pg.A_Const_Fval:
		p.b.WriteString(v.Fval.Fval)
	case *pg.A_Const_Boolval:
		if v.Boolval.Boolval {
			p.b.WriteString("TRUE")
		} else {
			p.b.WriteString("FALSE")
		}
	case *pg.A_Const_Sval:
		s := v.Sval.Sval
		if strings.ContainsAny(s, `'\`) {
			return refuse("a string literal with a quote or a backslash", "escape quotes with a backslash, PostgreSQL by doubling them")
		}
		for _, r := range s {
			if r < 0x20 || r == 0x7f {
				return refuse("a string literal with a control character", "escape them differently")
			}
		}
		p.b.WriteString("'" + s + "'")
	default:
		return refuse("a bit-string literal", "do not have it")
	}
	return nil
}

var comparison = map[string]bool{"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true, "+": true, "-": true, "*": true, "%": true}

func opName(names []*pg.Node) string {
	var parts []string
	for _, n := range names {
		if s := n.GetString_(); s != nil {
			parts = append(parts, s.Sval)
		}
	}
	return strings.Join(parts, ".")
}

func (p *exprPrinter) aexpr(a *pg.A_Expr) *sqlrewrite.Error {
	op := opName(a.Name)
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		switch {
		case op == "/":
			return refuse("the operator /", "divide integers differently (PostgreSQL truncates, HiveQL and Spark return a fraction)")
		case op == "||":
			return refuse("the operator ||", "treat it differently (older HiveQL has no ||; concat() handles NULL differently)")
		case op == "~" || op == "~*" || op == "!~" || op == "!~*":
			return refuse("the regular-expression operator "+op, "spell regular expressions differently (RLIKE, regexp)")
		case !comparison[op]:
			return refuse("the operator "+op, "do not have it")
		}
		if a.Lexpr == nil { // unary minus
			if op != "-" {
				return refuse("the prefix operator "+op, "do not have it")
			}
			p.b.WriteString("-")
			return p.operand(a.Rexpr, precLeaf)
		}
		// Left-associative arithmetic: the right operand must bind tighter.
		left, right := precAdd, precAdd // comparisons: arithmetic binds tighter on both sides
		switch prec(&pg.Node{Node: &pg.Node_AExpr{AExpr: a}}) {
		case precAdd:
			left, right = precAdd, precMul
		case precMul:
			left, right = precMul, precUnary
		}
		if err := p.operand(a.Lexpr, left); err != nil {
			return err
		}
		p.b.WriteString(" " + op + " ")
		return p.operand(a.Rexpr, right)
	case pg.A_Expr_Kind_AEXPR_IN:
		items := a.Rexpr.GetList()
		if items == nil {
			return refuse("IN with a subquery", "would read it with their own names and access checks")
		}
		if err := p.operand(a.Lexpr, precLeaf); err != nil {
			return err
		}
		if op == "<>" {
			p.b.WriteString(" NOT IN (")
		} else {
			p.b.WriteString(" IN (")
		}
		if err := p.list(items.Items); err != nil {
			return err
		}
		p.b.WriteByte(')')
		return nil
	case pg.A_Expr_Kind_AEXPR_LIKE:
		if a.Rexpr.GetAConst() == nil {
			return refuse("LIKE with an ESCAPE clause or a computed pattern", "escape patterns differently")
		}
		if err := p.operand(a.Lexpr, precLeaf); err != nil {
			return err
		}
		if op == "!~~" {
			p.b.WriteString(" NOT LIKE ")
		} else {
			p.b.WriteString(" LIKE ")
		}
		return p.operand(a.Rexpr, precLeaf)
	case pg.A_Expr_Kind_AEXPR_ILIKE:
		return refuse("ILIKE", "do not have it; write lower(x) LIKE 'pattern'")
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		return refuse("SIMILAR TO", "do not have it")
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		bounds := a.Rexpr.GetList()
		if bounds == nil || len(bounds.Items) != 2 {
			return refuse("this BETWEEN", "do not have it")
		}
		if err := p.operand(a.Lexpr, precLeaf); err != nil {
			return err
		}
		if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			p.b.WriteString(" NOT BETWEEN ")
		} else {
			p.b.WriteString(" BETWEEN ")
		}
		if err := p.operand(bounds.Items[0], precLeaf); err != nil {
			return err
		}
		p.b.WriteString(" AND ")
		return p.operand(bounds.Items[1], precLeaf)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		return refuse("IS DISTINCT FROM", "do not all have it (HiveQL writes <=>)")
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		return refuse("NULLIF", "do not all have it")
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		return refuse(op+" ANY/ALL", "do not have it; write IN (…)")
	case pg.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		return refuse("BETWEEN SYMMETRIC", "do not have it")
	}
	return refuse("this operator", "do not have it")
}

func (p *exprPrinter) boolExpr(b *pg.BoolExpr) *sqlrewrite.Error {
	switch b.Boolop {
	case pg.BoolExprType_NOT_EXPR:
		p.b.WriteString("NOT ")
		return p.operand(b.Args[0], precLeaf)
	case pg.BoolExprType_AND_EXPR, pg.BoolExprType_OR_EXPR:
		sep, need := " AND ", precAnd
		if b.Boolop == pg.BoolExprType_OR_EXPR {
			sep, need = " OR ", precOr
		}
		for i, arg := range b.Args {
			if i > 0 {
				p.b.WriteString(sep)
			}
			if err := p.operand(arg, need); err != nil {
				return err
			}
		}
		return nil
	}
	return refuse("this boolean expression", "do not have it")
}

// castTypes are the types a CAST may name, with the spelling every engine
// reads the same way.
var castTypes = map[string]string{"int4": "INT", "int8": "BIGINT", "int2": "SMALLINT", "bool": "BOOLEAN", "date": "DATE",
	"timestamp": "TIMESTAMP", "numeric": "DECIMAL", "varchar": "VARCHAR", "bpchar": "CHAR"}

func (p *exprPrinter) cast(c *pg.TypeCast) *sqlrewrite.Error {
	if loc := int(c.Location); loc >= 0 && loc+2 <= len(p.src) && p.src[loc:loc+2] == "::" {
		return refuse("the :: cast", "do not have it; write CAST(x AS type)")
	}
	var names []string
	for _, n := range c.TypeName.GetNames() {
		if s := n.GetString_(); s != nil {
			names = append(names, s.Sval)
		}
	}
	if len(names) == 0 || len(c.TypeName.ArrayBounds) > 0 {
		return refuse("this CAST", "do not have its type")
	}
	base := names[len(names)-1]
	typ, ok := castTypes[base]
	if !ok || (len(names) == 2 && names[0] != "pg_catalog") || len(names) > 2 {
		return refuse("CAST to "+strings.Join(names, "."), "do not have that type")
	}
	var mods []string
	for _, m := range c.TypeName.Typmods {
		k := m.GetAConst()
		if k == nil || k.GetIval() == nil {
			return refuse("this type modifier", "do not have it")
		}
		mods = append(mods, strconv.FormatInt(int64(k.GetIval().Ival), 10))
	}
	if len(mods) > 0 && typ != "DECIMAL" && typ != "VARCHAR" && typ != "CHAR" {
		return refuse("CAST to "+typ+" with a modifier", "do not have it")
	}
	p.b.WriteString("CAST(")
	if err := p.expr(c.Arg); err != nil {
		return err
	}
	p.b.WriteString(" AS " + typ)
	if len(mods) > 0 {
		p.b.WriteString("(" + strings.Join(mods, ",") + ")")
	}
	p.b.WriteByte(')')
	return nil
}

// portableFuncs are the functions every engine has with one meaning.
var portableFuncs = map[string]bool{"lower": true, "upper": true, "ltrim": true, "rtrim": true, "length": true, "abs": true}

func (p *exprPrinter) funcCall(f *pg.FuncCall) *sqlrewrite.Error {
	name := opName(f.Funcname)
	if f.AggStar || f.AggDistinct || f.Over != nil || len(f.AggOrder) > 0 || f.AggFilter != nil || f.FuncVariadic || f.AggWithinGroup {
		return refuse("an aggregate or window call of "+name, "do not have it here")
	}
	switch {
	case name == "pg_catalog.btrim" && f.Funcformat == pg.CoercionForm_COERCE_SQL_SYNTAX && len(f.Args) == 1:
		name = "trim" // TRIM(x)
	case f.Funcformat == pg.CoercionForm_COERCE_SQL_SYNTAX:
		return refuse("the SQL-syntax function "+strings.TrimPrefix(name, "pg_catalog."), "spell it differently")
	case !portableFuncs[name]:
		return refuse("the function "+name+"()", "may not have it, or give it another meaning")
	}
	p.b.WriteString(name + "(")
	if err := p.list(f.Args); err != nil {
		return err
	}
	p.b.WriteByte(')')
	return nil
}

func (p *exprPrinter) caseExpr(c *pg.CaseExpr) *sqlrewrite.Error {
	p.b.WriteString("CASE")
	if c.Arg != nil {
		p.b.WriteByte(' ')
		if err := p.expr(c.Arg); err != nil {
			return err
		}
	}
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		if cw == nil {
			return refuse("this CASE", "do not have it")
		}
		// WHEN, THEN, ELSE and END delimit their expressions.
		p.b.WriteString(" WHEN ")
		if err := p.expr(cw.Expr); err != nil {
			return err
		}
		p.b.WriteString(" THEN ")
		if err := p.expr(cw.Result); err != nil {
			return err
		}
	}
	if c.Defresult != nil {
		p.b.WriteString(" ELSE ")
		if err := p.expr(c.Defresult); err != nil {
			return err
		}
	}
	p.b.WriteString(" END")
	return nil
}

// customPlaceholder stands for {col} while a CUSTOM mask's expression is
// parsed: {col} is not SQL.
const customPlaceholder = "pgranger_col_placeholder"

// portableCustom checks and prints a CUSTOM mask expression with {col}.
func (st *stmtContext) portableCustom(text string, columns map[string]bool, column string) (string, *sqlrewrite.Error) {
	sql := "SELECT " + strings.ReplaceAll(text, "{col}", customPlaceholder)
	tree, err := sqlrewrite.Parse(sql, st.svc.cfg.MaxStatementBytes, st.svc.cfg.MaxNestingDepth)
	if err != nil || len(tree.Stmts) != 1 {
		return "", errorf(sqlstate.SyntaxError, "the CUSTOM mask expression %q does not parse as one SQL expression", text)
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || sel.FromClause != nil || sel.WhereClause != nil {
		return "", errorf(sqlstate.SyntaxError, "the CUSTOM mask expression %q is not one SQL expression", text)
	}
	val := sel.TargetList[0].GetResTarget().GetVal()
	if val == nil {
		return "", errorf(sqlstate.SyntaxError, "the CUSTOM mask expression %q is not one SQL expression", text)
	}
	return portable(val, sql, customPlaceholder, columns, column)
}
