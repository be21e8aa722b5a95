package sqlrewrite

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pgranger/pgranger/sqlstate"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// exprs walks expressions of one query level: column references are
// resolved against sc (and its parents, for correlated references), nested
// queries get their own level, function calls are checked.
func (r *stmtRewriter) exprs(sc *scope, parts ...any) {
	for _, p := range parts {
		if r.err != nil {
			return
		}
		switch v := p.(type) {
		case nil:
		case *pg.Node:
			if v != nil {
				r.walkExpr(sc, v)
			}
		case []*pg.Node:
			for _, n := range v {
				r.walkExpr(sc, n)
			}
		case protoreflect.ProtoMessage:
			if !isNilMessage(v) {
				walkNodes(v, func(n *pg.Node) bool { return r.visitExpr(sc, n) })
			}
		}
	}
}

func isNilMessage(m protoreflect.ProtoMessage) bool {
	switch v := m.(type) {
	case *pg.CTESearchClause:
		return v == nil
	case *pg.CTECycleClause:
		return v == nil
	}
	return m == nil
}

func (r *stmtRewriter) walkExpr(sc *scope, n *pg.Node) {
	walkNodes(n, func(x *pg.Node) bool { return r.visitExpr(sc, x) })
}

func (r *stmtRewriter) visitExpr(sc *scope, n *pg.Node) bool {
	if r.err != nil {
		return false
	}
	switch v := n.Node.(type) {
	case *pg.Node_ColumnRef:
		r.curCol = n
		r.columnRef(sc, v.ColumnRef)
		r.curCol = nil
		return false
	case *pg.Node_AExpr:
		r.checkOperator(v.AExpr.Name)
		return r.err == nil && r.checkOperatorExpr(sc, v.AExpr)
	case *pg.Node_SortBy:
		r.checkOperator(v.SortBy.UseOp)
		r.checkOperatorName(v.SortBy.UseOp)
		return true
	case *pg.Node_SubLink:
		r.checkOperator(v.SubLink.OperName)
		r.checkOperatorName(v.SubLink.OperName)
		r.walkExpr(sc, v.SubLink.Testexpr)
		if body := r.selectStatement(v.SubLink.Subselect.GetSelectStmt(), sc); body != nil {
			r.barrier().sublinks[v.SubLink] = body
		}
		if v.SubLink.Subselect.GetSelectStmt() == nil {
			r.fail(errorf(sqlstate.FeatureNotSupported, "unsupported subquery"))
		}
		return false
	case *pg.Node_SelectStmt:
		r.selectStatement(v.SelectStmt, sc)
		return false
	case *pg.Node_SqlvalueFunction:
		r.sessionValue(n, v.SqlvalueFunction)
		return false
	case *pg.Node_FuncCall:
		if r.sessionFunctionCall(n, v.FuncCall) {
			return false
		}
		r.checkFunction(v.FuncCall)
		return true
	case *pg.Node_RangeVar, *pg.Node_RangeSubselect, *pg.Node_JoinExpr, *pg.Node_RangeFunction:
		// Relations are only legal in FROM, where fromItem handles them;
		// one anywhere else was not understood, so nothing is forwarded.
		r.fail(errorf(sqlstate.FeatureNotSupported, "unexpected relation reference in an expression"))
		return false
	}
	return true
}

// columnRef marks the governed columns a reference may read. Resolution
// follows PostgreSQL's rules closely enough that it can only over-mark: a
// reference is attributed to every candidate at the innermost level that
// has one, and a name that matches no column is taken as a whole-row
// reference when it names a FROM item.
func (r *stmtRewriter) columnRef(sc *scope, cr *pg.ColumnRef) {
	hits := r.collecting()
	defer func() { r.recordColumn(sc, r.curCol, cr, *hits) }()
	var names []string
	star := false
	for _, f := range cr.Fields {
		switch {
		case f.GetAStar() != nil:
			star = true
		case f.GetString_() != nil:
			names = append(names, f.GetString_().Sval)
		}
	}
	switch {
	case star && len(names) == 0:
		for _, it := range sc.items {
			markAll(it)
		}
	case star:
		r.qualifiedStar(sc, cr, names)
	case len(names) == 1:
		r.unqualifiedColumn(sc, names[0])
	default:
		r.qualifiedColumn(sc, cr, names)
	}
}

func (r *stmtRewriter) unqualifiedColumn(sc *scope, name string) {
	for s := sc; s != nil; s = s.parent {
		found := false
		for _, it := range s.items {
			if markColumn(it, name) {
				found = true
			}
		}
		if found {
			return
		}
	}
	// No column of that name: a whole-row reference to a FROM item.
	if it := findItem(sc, name); it != nil {
		markAll(it)
	}
}

// qualifiedColumn handles t.c, s.t.c, d.s.t.c and composite field access
// (c.f, t.c.f). Every reading the grammar allows is marked.
func (r *stmtRewriter) qualifiedColumn(sc *scope, cr *pg.ColumnRef, names []string) {
	// t.c (or t.c.field…)
	if it := findItem(sc, names[0]); it != nil {
		if !markColumn(it, names[1]) {
			markAll(it) // t.f where t is a composite column or unknown: be safe
		}
	} else {
		// c.field: a composite column reference.
		r.unqualifiedColumn(sc, names[0])
	}
	// s.t.c and d.s.t.c
	for skip := 0; skip <= 1 && len(names) >= 3+skip; skip++ {
		if skip == 1 && names[0] != r.sess.Database {
			continue
		}
		schema, table, col := names[skip], names[skip+1], names[skip+2]
		for _, ref := range findRelation(sc, schema, table) {
			if !ref.markVisible(col) {
				ref.markAllColumns()
			}
			ref.qualifiedRefs = append(ref.qualifiedRefs, qualifiedRef{cr: cr, strip: skip + 1, shadowed: !namesRef(sc, table, ref)})
		}
	}
}

func (r *stmtRewriter) qualifiedStar(sc *scope, cr *pg.ColumnRef, names []string) {
	// t.* (or t.c.* for a composite column c)
	if it := findItem(sc, names[0]); it != nil {
		if len(names) == 1 || !markColumn(it, names[1]) {
			markAll(it)
		}
	} else {
		r.unqualifiedColumn(sc, names[0]) // c.* of a composite column
	}
	// s.t.* and d.s.t.*
	for skip := 0; skip <= 1 && len(names) >= 2+skip; skip++ {
		if skip == 1 && names[0] != r.sess.Database {
			continue
		}
		for _, ref := range findRelation(sc, names[skip], names[skip+1]) {
			ref.markAllColumns()
			ref.qualifiedRefs = append(ref.qualifiedRefs, qualifiedRef{cr: cr, strip: skip + 1, shadowed: !namesRef(sc, names[skip+1], ref)})
		}
	}
}

// findItem finds the FROM item visible as name, innermost level first.
func findItem(sc *scope, name string) *fromItem {
	for s := sc; s != nil; s = s.parent {
		for _, it := range s.items {
			if it.visible == name {
				return it
			}
		}
	}
	return nil
}

// namesRef reports whether the bare name, where sc stands, names the FROM
// item of ref (and not another item at the same or an inner level).
func namesRef(sc *scope, name string, ref *relRef) bool {
	it := findItem(sc, name)
	return it != nil && it.ref == ref
}

// findRelation finds unaliased references to schema.table (the only ones
// PostgreSQL lets a schema-qualified column reference name).
func findRelation(sc *scope, schema, table string) []*relRef {
	var out []*relRef
	var visit func(items []*fromItem)
	visit = func(items []*fromItem) {
		for _, it := range items {
			if it.ref != nil && it.ref.unaliased && it.ref.rel.Schema == schema && it.ref.rel.Name == table {
				out = append(out, it.ref)
			}
			visit(it.children)
		}
	}
	for s := sc; s != nil && len(out) == 0; s = s.parent {
		visit(s.items)
	}
	return out
}

// markColumn marks a visible column name of a FROM item; it reports whether
// the item has that column (for opaque items we cannot know: false).
func markColumn(it *fromItem, name string) bool {
	found := false
	if it.ref != nil && it.ref.markVisible(name) {
		found = true
	}
	for _, ch := range it.children {
		if markColumn(ch, name) {
			found = true
		}
	}
	return found
}

func markAll(it *fromItem) {
	if it.ref != nil {
		it.ref.markAllColumns()
	}
	for _, ch := range it.children {
		markAll(ch)
	}
}
