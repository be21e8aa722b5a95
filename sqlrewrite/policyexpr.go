package sqlrewrite

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/sqlstate"
)

// policyExpr turns a Ranger row-filter or CUSTOM mask expression into an
// expression node for the wrapper over rel. Policy expressions are trusted
// (their tables are not access-checked for the user) but never trusted to be
// well formed: macros are substituted as escaped literals, the result must
// parse as exactly one expression, and session functions become the
// authenticated user. Relations a filter reads are qualified with the
// session's default search_path and built-in functions with pg_catalog, so
// a user's SET search_path cannot make a filter read a different table or
// call a different function. sc is what ${{…}} expressions in text are
// evaluated for: the Ranger resource and the current tag.
func (r *stmtRewriter) policyExpr(text string, rel *catalog.Relation, sc exprScope) (*pg.Node, *Error) {
	expanded, err := r.expandMacros(text, sc)
	if err != nil {
		return nil, err
	}
	expanded = normalizeHiveisms(expanded)
	tree, perr := parse("SELECT "+expanded, noLimit, noLimit)
	if perr != nil {
		msg := strings.TrimPrefix(perr.Message, "pgranger: ")
		if perr.Code == sqlstate.StatementTooComplex {
			// "statement is nested too deeply …": the limit, not the syntax.
			return nil, errorf(sqlstate.StatementTooComplex, "expression %s", strings.TrimPrefix(msg, "statement "))
		}
		return nil, unanalysable(sqlstate.SyntaxError, "expression does not parse: %v", msg)
	}
	if len(tree.Stmts) != 1 {
		return nil, errorf(sqlstate.SyntaxError, "expression is more than one statement")
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || sel.FromClause != nil || sel.WhereClause != nil ||
		sel.GroupClause != nil || sel.HavingClause != nil || sel.WindowClause != nil || sel.SortClause != nil ||
		sel.DistinctClause != nil || sel.LimitCount != nil || sel.LimitOffset != nil || sel.LockingClause != nil ||
		sel.IntoClause != nil || sel.WithClause != nil || sel.ValuesLists != nil || sel.Op != pg.SetOperation_SETOP_NONE {
		return nil, errorf(sqlstate.SyntaxError, "expression is not a single expression")
	}
	rt := sel.TargetList[0].GetResTarget()
	if rt == nil || rt.Name != "" || rt.Val == nil {
		return nil, errorf(sqlstate.SyntaxError, "expression is not a single expression")
	}
	expr := rt.Val
	if name := foreignColumn(expr, rel); name != "" {
		return nil, errorf(sqlstate.InsufficientPrivilege, "%s is not a column of %s.%s", name, rel.Schema, rel.Name)
	}
	ctes := map[string]bool{}
	walkNodes(expr, func(n *pg.Node) bool {
		if c := n.GetCommonTableExpr(); c != nil {
			ctes[c.Ctename] = true
		}
		return true
	})
	var failure *Error
	r.inPolicyExpr = true
	defer func() { r.inPolicyExpr = false }()
	walkNodes(expr, func(n *pg.Node) bool {
		if failure != nil {
			return false
		}
		switch v := n.Node.(type) {
		case *pg.Node_ParamRef:
			// Nothing binds $n in a policy expression (and a literal
			// template counts on the user's placeholders being the only ones).
			failure = errorf(sqlstate.SyntaxError, "expression has a parameter ($%d)", v.ParamRef.Number)
			return false
		case *pg.Node_SqlvalueFunction:
			r.sessionValue(n, v.SqlvalueFunction)
			return false
		case *pg.Node_FuncCall:
			if !r.sessionFunctionCall(n, v.FuncCall) && len(v.FuncCall.Funcname) == 1 && r.snap.IsCatalogFunction(strVal(v.FuncCall.Funcname[0])) {
				// A built-in is called as pg_catalog's whatever the
				// user's search_path holds (see checkFunction).
				v.FuncCall.Funcname = append([]*pg.Node{pg.MakeStrNode("pg_catalog")}, v.FuncCall.Funcname...)
			}
			return true
		case *pg.Node_RangeVar:
			rv := v.RangeVar
			if rv.Schemaname != "" || ctes[rv.Relname] {
				return false
			}
			if found, ok := r.snap.Resolve(rv.Relname, r.sess.DefaultSearchPath, r.sess.Subject.User); ok {
				rv.Schemaname = found.Schema
			} else {
				failure = errorf(sqlstate.UndefinedTable, "relation %q in the expression does not exist", rv.Relname)
			}
			return false
		}
		return true
	})
	if failure != nil {
		return nil, failure
	}
	return expr, nil
}

// normalizeHiveisms rewrites Hive spellings PostgreSQL rejects:
// current_user() → current_user (likewise session_user, user,
// current_role), using the scanner so string literals are never touched.
func normalizeHiveisms(text string) string {
	if !strings.Contains(text, "(") {
		return text
	}
	scan, err := pg.Scan(text)
	if err != nil {
		return text
	}
	toks := scan.Tokens
	var b strings.Builder
	last := 0
	for i := 0; i+2 < len(toks); i++ {
		switch toks[i].Token {
		case pg.Token_CURRENT_USER, pg.Token_SESSION_USER, pg.Token_USER, pg.Token_CURRENT_ROLE:
		default:
			continue
		}
		if toks[i+1].Token == pg.Token_ASCII_40 && toks[i+2].Token == pg.Token_ASCII_41 {
			b.WriteString(text[last:toks[i].End])
			last = int(toks[i+2].End)
			i += 2
		}
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// foreignColumn returns the first column reference of the expression's own
// level (outside its subqueries) that does not name a column of rel, or the
// table itself as a whole row; "" when there is none. The wrapper's only
// FROM item is rel, so such a name would be looked up in the user's
// enclosing query, which could then decide the filter's value
// (SELECT (SELECT count(*) FROM t) FROM (SELECT 'x' AS dept) s).
func foreignColumn(expr *pg.Node, rel *catalog.Relation) string {
	bad := ""
	var visit func(n *pg.Node) bool
	visit = func(n *pg.Node) bool {
		if bad != "" {
			return false
		}
		switch v := n.Node.(type) {
		case *pg.Node_SubLink:
			// Names inside the subquery belong to its own FROM items.
			if v.SubLink.Testexpr != nil {
				walkNodes(v.SubLink.Testexpr, visit)
			}
			return false
		case *pg.Node_ColumnRef:
			var names []string
			star := false
			for _, f := range v.ColumnRef.Fields {
				if f.GetAStar() != nil {
					star = true
				} else {
					names = append(names, strVal(f))
				}
			}
			if !ownColumnRef(names, star, rel) {
				bad = strings.Join(names, ".")
				if star {
					bad += ".*"
				}
			}
			return false
		}
		return true
	}
	walkNodes(expr, visit)
	return bad
}

// ownColumnRef reports whether c, t.c, s.t.c (or t.*, s.t.*, or t as a
// whole row) names rel or one of its columns.
func ownColumnRef(names []string, star bool, rel *catalog.Relation) bool {
	switch {
	case len(names) == 1 && !star:
		_, ok := rel.Column(names[0])
		return ok || names[0] == rel.Name
	case len(names) == 1:
		return names[0] == rel.Name
	case len(names) == 2 && !star && names[0] == rel.Name:
		_, ok := rel.Column(names[1])
		return ok
	case len(names) == 2 && star:
		return names[0] == rel.Schema && names[1] == rel.Name
	case len(names) == 3 && !star && names[0] == rel.Schema && names[1] == rel.Name:
		_, ok := rel.Column(names[2])
		return ok
	}
	return false
}
