package sqlrewrite

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// The barrier without DDL (docs/security.md "The barrier" has the rule
// and its proof; docs/architecture.md the place of this file).
//
// A row-filtered relation is read through a wrapper subquery. Left plain,
// PostgreSQL pulls it up into the user's query, and the user's predicates
// become quals of the same scan as the filter, ordered by cost — so a
// predicate that can raise an error, a notice or a side effect depending on
// a value could be evaluated on a row the filter removes. For each wrapper
// with a row filter the rewriter looks at every predicate PostgreSQL could
// evaluate at that relation's scan — the conjuncts of WHERE, JOIN … ON and
// HAVING that read its columns, at its level, at the levels it may be
// pulled up into and in correlated sublinks, those an equality links to
// it (equivalence classes), column-free volatile ones — and decides:
//
//   - plain: every such conjunct is safe (leakproof.go): the wrapper stays
//     a plain subquery, which the planner flattens (join estimates and
//     index paths as on the table itself);
//   - guard: each unsafe conjunct reads only this relation and may be
//     evaluated inside it (not on the null-extended side of an outer join):
//     it moves into the wrapper as CASE WHEN <filter> THEN <conjunct> ELSE
//     false END, which evaluates it only where the filter holds, whatever
//     order the planner gives the quals; the wrapper stays plain;
//   - fence: otherwise the wrapper gets OFFSET 0, which PostgreSQL neither
//     pulls up nor pushes quals into, and the safe conjuncts that read only
//     this relation move inside it (so a key lookup still uses the index).
//
// Whatever is not modelled fails towards the fence: a column reference in
// an expression whose evaluation point is not known here (siteUnknown), a
// name that could belong to a subquery whose columns are not known, an
// operator whose resolution is not certain.

// siteKind says where an expression being walked is evaluated.
type siteKind uint8

const (
	siteUnknown siteKind = iota // not modelled: a wrapper it reads is fenced
	siteOutput                  // on rows that passed every qual of the level (target list, ORDER BY, …)
	siteQual                    // a conjunct being walked (bar.stack)
)

type conjKind uint8

const (
	conjWhere conjKind = iota
	conjOn
	conjHaving
)

// conjunct is one AND-ed term of a WHERE, JOIN … ON or HAVING clause.
type conjunct struct {
	node  *pg.Node
	owner **pg.Node // the clause it belongs to (to drop it when moved)
	level *scope
	kind  conjKind
	join  *pg.JoinExpr // for conjOn
	cols  []*colAttr   // column references inside it, sublinks included
	// anyLink is set for a conjunct that is exactly "x IN (SELECT …)" or
	// "x op ANY (SELECT …)", which PostgreSQL turns into a semi-join whose
	// join qual compares x with the sublink's output column.
	anyLink *pg.SubLink
}

// colHit is a governed column (col ≥ 0) or whole row (col = -1) the name
// resolver marked for the reference being resolved.
type colHit struct {
	ref *relRef
	col int
}

// colAttr is what one column reference may read.
type colAttr struct {
	node  *pg.Node
	touch []touchRef
	ents  []entity
	typ   typ
	// ref/col: the reference reads exactly this governed column and
	// nothing else (a conjunct made of such references can move into ref).
	ref *relRef
	col int
	// unsafeValue: the column may stand for an expression that is not
	// leakproof (a computed column of a subquery, CTE or view that the
	// planner may pull up), so the reference is not a plain value.
	unsafeValue bool
}

// touchRef: a column reference may read rows of ref; at is the level
// whose FROM holds the item it names (ref itself, or the subquery ref is
// in).
type touchRef struct {
	ref *relRef
	at  *scope
}

// outCol is one output column of a query level.
type outCol struct {
	name  string
	typ   typ
	touch []*relRef // governed references its value derives from
	ents  []entity  // for a bare column: what it is equal to
	// unsafe: the value is an expression that is not leakproof (or not
	// known to be). PostgreSQL substitutes it where the column is used
	// when it pulls the level up, so a predicate on the column is a
	// predicate on the expression.
	unsafe bool
}

// entity is a column for equivalence classes: a governed reference's
// column, a name in an opaque FROM item, or an expression node.
type entity struct {
	ref  *relRef
	item *fromItem
	col  int
	name string
	node *pg.Node
}

// barrierState collects, during the walk, what the decision needs.
type barrierState struct {
	level     *scope // the query level being walked
	site      siteKind
	stack     []*conjunct // conjuncts being walked, outermost first
	conjuncts []*conjunct
	cols      map[*pg.ColumnRef]*colAttr
	hits      *[]colHit // collects what the resolver marks for one reference
	unknown   []touchRef
	sublinks  map[*pg.SubLink]*scope
	usingEqs  []usingEq

	decided map[*relRef]*barrierDecision
	removed map[*pg.Node]bool // conjuncts moved into a wrapper
}

// barrierDecision is the outcome for one filtered wrapper.
type barrierDecision struct {
	fence  bool
	guards []*conjunct // unsafe conjuncts evaluated inside, under the filter
	pushed []*conjunct // safe conjuncts moved inside the fence
}

func (r *stmtRewriter) typer() *exprTyper {
	b := r.barrier()
	return &exprTyper{b: r.snap.Builtins, cols: b.cols, params: r.env.ParamTypes, literals: r.env.literalParams, sublinks: b.sublinks,
		correlated: func(sl *pg.SubLink) bool { return r.correlated(sl) }}
}

// ancestorOrSelf reports whether a is l or a level l is nested in.
func ancestorOrSelf(a, l *scope) bool {
	for x := l; x != nil; x = x.up {
		if x == a {
			return true
		}
	}
	return false
}

// correlated reports whether a sublink's query reads anything outside
// itself.
func (r *stmtRewriter) correlated(sl *pg.SubLink) bool {
	b := r.barrier()
	body := b.sublinks[sl]
	if body == nil {
		return true
	}
	out := false
	walkNodes(sl.Subselect, func(x *pg.Node) bool {
		cr := x.GetColumnRef()
		if cr == nil {
			return !out
		}
		a := b.cols[cr]
		if a == nil {
			out = true
			return false
		}
		for _, t := range a.touch {
			if t.at == nil || !ancestorOrSelf(body, t.at) {
				out = true
			}
		}
		if len(a.touch) == 0 && len(a.ents) == 0 {
			out = true
		}
		return !out
	})
	return out
}

// filtered reports whether a reference is read through a wrapper with a
// row filter (the only ones the barrier concerns: masks hide no rows).
func filtered(ref *relRef) bool {
	return ref.dml == nil && ref.pol != nil && !ref.pol.super && len(ref.pol.filter.Exprs) > 0 &&
		(ref.pol.wrap && !ref.trusted || ref.pol.wrapTrusted)
}

// decideBarriers decides, for every filtered reference, plain, guard or
// fence (see the top of this file).
func (r *stmtRewriter) decideBarriers() {
	b := r.barrier()
	b.decided = map[*relRef]*barrierDecision{}
	b.removed = map[*pg.Node]bool{}
	any := false
	for _, ref := range r.refs {
		if filtered(ref) {
			b.decided[ref] = &barrierDecision{}
			any = true
		}
	}
	if !any {
		return
	}
	t := r.typer()
	classes := r.equivalences()
	for _, tr := range b.unknown {
		if d := b.decided[tr.ref]; d != nil {
			d.fence = true
		}
	}
	// USING and NATURAL compare their columns with "=" as a join qual.
	for _, u := range b.usingEqs {
		var refs []*relRef
		var types []typ
		for _, h := range append(append([]colHit(nil), u.left...), u.right...) {
			if b.decided[h.ref] != nil {
				refs = append(refs, h.ref)
			}
			if h.col < 0 {
				types = append(types, typ{})
			} else {
				c := h.ref.rel.Columns[h.col]
				types = append(types, typ{c.TypeOID, c.BaseOID})
			}
		}
		if len(refs) == 0 {
			continue
		}
		eq := []*pg.Node{pg.MakeStrNode("=")}
		if u.opaque || len(u.left) == 0 || len(u.right) == 0 || !allSame(types) || !t.leakproofOp(eq, types[0], types[0]) {
			for _, ref := range refs {
				b.decided[ref].fence = true
			}
		}
	}
	type verdict struct {
		c       *conjunct
		touches []*relRef
		safe    bool
		mover   *relRef // the one reference it may move into, if any
	}
	var verdicts []verdict
	for _, c := range b.conjuncts {
		touches := r.touches(t, c, classes)
		if len(touches) == 0 {
			continue
		}
		v := verdict{c: c, touches: touches, safe: r.conjunctSafe(t, c)}
		switch {
		case r.noColumns(c) && t.volatile(c.node):
			// Evaluated per row of the whole level (of its join):
			// inside one relation it would run another number of
			// times. It stays where it is, above fenced wrappers.
		case len(touches) == 1:
			v.mover = r.movable(c, touches[0])
		case r.noColumns(c):
			// A conjunct without columns filters every row of its
			// level alike: under the guard of any one inner relation
			// of the level it means the same.
			for _, ref := range touches {
				if v.mover = r.movable(c, ref); v.mover != nil {
					break
				}
			}
		}
		if !v.safe && v.mover == nil {
			for _, ref := range touches {
				b.decided[ref].fence = true
			}
		}
		verdicts = append(verdicts, v)
	}
	for _, v := range verdicts {
		if v.mover == nil {
			continue
		}
		d := b.decided[v.mover]
		switch {
		case !v.safe && !d.fence:
			d.guards = append(d.guards, v.c)
			b.removed[v.c.node] = true
		case v.safe && d.fence:
			d.pushed = append(d.pushed, v.c)
			b.removed[v.c.node] = true
		}
	}
}

// touches lists the filtered references whose rows the conjunct may be
// evaluated on.
func (r *stmtRewriter) touches(t *exprTyper, c *conjunct, classes *equivalence) []*relRef {
	b := r.barrier()
	seen := map[*relRef]bool{}
	var out []*relRef
	add := func(ref *relRef) {
		if b.decided[ref] != nil && !seen[ref] {
			seen[ref] = true
			out = append(out, ref)
		}
	}
	for _, a := range c.cols {
		for _, tr := range a.touch {
			// A reference to an item of a level nested inside the
			// conjunct (a sublink's own FROM) is that level's business.
			if tr.at == nil || ancestorOrSelf(tr.at, c.level) {
				add(tr.ref)
			}
		}
	}
	// x IN (SELECT y …) becomes a semi-join on x = y: y's relation is
	// read where the join qual is evaluated.
	if c.anyLink != nil {
		if body := b.sublinks[c.anyLink]; body != nil {
			if body.outsKnown && len(body.outs) == 1 {
				for _, w := range body.outs[0].touch {
					add(w)
				}
			} else {
				for _, w := range body.contained {
					add(w)
				}
			}
		}
	}
	// An equality puts its sides into one equivalence class, from which
	// the planner may derive a qual on any relation of the class.
	if l, rr, ok := equality(c.node); ok {
		for _, side := range []*pg.Node{l, rr} {
			for _, e := range r.entitiesOf(side) {
				for _, ref := range classes.refsOf(e) {
					add(ref)
				}
			}
		}
	}
	// A column-free conjunct that is not safe: a volatile one is
	// evaluated per row of its level; any other becomes a one-time
	// filter, evaluated once before the rows are read — but once per
	// child scan and per process in a parallel plan, so how often it
	// runs (a notice each time) can follow how long the scans of
	// hidden rows take. Either way it moves under a filter.
	if r.noColumns(c) && !t.safe(c.node) {
		for _, ref := range c.level.contained {
			if !r.inSublink(ref, c.level) {
				add(ref)
			}
		}
	}
	return out
}

// conjunctSafe applies the leakproof rule to a conjunct; a top-level
// IN (SELECT …) and [NOT] EXISTS (SELECT …) are judged as the semi- or
// anti-join they become.
func (r *stmtRewriter) conjunctSafe(t *exprTyper, c *conjunct) bool {
	if r.existsPullsUp(t, c) {
		return true
	}
	if sl := c.anyLink; sl != nil && !r.correlated(sl) {
		body := r.barrier().sublinks[sl]
		if body == nil || !body.outsKnown || len(body.outs) != 1 {
			return false
		}
		names := sl.OperName
		if len(names) == 0 {
			names = []*pg.Node{pg.MakeStrNode("=")}
		}
		x := t.typeOf(sl.Testexpr)
		return x.oid != 0 && !body.outs[0].unsafe && t.leakproofOp(names, x, body.outs[0].typ) && t.safe(sl.Testexpr)
	}
	return t.safe(c.node)
}

// existsPullsUp reports whether the conjunct is [NOT] EXISTS (SELECT …)
// that PostgreSQL certainly turns into a semi- or anti-join (its rules in
// pull_up_sublinks and convert_EXISTS_sublink_to_join): a WHERE term or
// one of an inner join's ON, over a query with plain relations in FROM,
// no set operation, CTE, grouping, aggregate, window, LIMIT, OFFSET or
// locking, a target list of constants and columns, outer columns
// referenced in its WHERE only (and some), and a WHERE that is not
// volatile. Its WHERE terms then become quals of the join,
// each judged as a conjunct of its own; run as a subplan instead, the
// query would be evaluated per row, hidden ones included, so anything
// else is judged by the leakproof rule (and a sublink is never safe).
func (r *stmtRewriter) existsPullsUp(t *exprTyper, c *conjunct) bool {
	n := c.node
	if be := n.GetBoolExpr(); be != nil && be.Boolop == pg.BoolExprType_NOT_EXPR && len(be.Args) == 1 {
		n = be.Args[0]
	}
	sl := n.GetSubLink()
	if sl == nil || sl.SubLinkType != pg.SubLinkType_EXISTS_SUBLINK {
		return false
	}
	if c.kind != conjWhere && !(c.kind == conjOn && c.join.Jointype == pg.JoinType_JOIN_INNER) {
		return false
	}
	q := sl.Subselect.GetSelectStmt()
	body := r.barrier().sublinks[sl]
	if q == nil || body == nil || q.Op != pg.SetOperation_SETOP_NONE || q.WithClause != nil || len(q.GroupClause) > 0 ||
		q.HavingClause != nil || len(q.WindowClause) > 0 || q.LimitOffset != nil || q.LimitCount != nil ||
		len(q.LockingClause) > 0 || len(q.ValuesLists) > 0 || len(q.FromClause) == 0 || q.WhereClause == nil {
		return false
	}
	for _, tl := range q.TargetList {
		rt := tl.GetResTarget()
		if rt == nil || rt.Val.GetAConst() == nil && rt.Val.GetColumnRef() == nil && rt.Val.GetParamRef() == nil {
			return false
		}
	}
	// FROM: relations and joins of relations, their ON clauses reading
	// only the sublink's own level.
	inner := true
	var plain func(n *pg.Node) bool
	plain = func(n *pg.Node) bool {
		switch v := n.Node.(type) {
		case *pg.Node_RangeVar:
			return true
		case *pg.Node_JoinExpr:
			walkNodes(v.JoinExpr.Quals, func(x *pg.Node) bool {
				if cr := x.GetColumnRef(); cr != nil {
					if a := r.barrier().cols[cr]; a == nil || !readsOnly(a, body) {
						inner = false
					}
				}
				return inner
			})
			return inner && plain(v.JoinExpr.Larg) && plain(v.JoinExpr.Rarg)
		}
		return false
	}
	for _, f := range q.FromClause {
		if !plain(f) {
			return false
		}
	}
	// Its WHERE must read the enclosing level (convert_EXISTS_sublink_to_join:
	// "else it's not gonna be a join"); an uncorrelated EXISTS stays an
	// initplan.
	return !t.volatile(q.WhereClause) && r.correlated(sl)
}

// readsOnly reports whether a column reference resolved within level l
// (not to an enclosing one).
func readsOnly(a *colAttr, l *scope) bool {
	if len(a.touch) == 0 && len(a.ents) == 0 {
		return false
	}
	for _, tr := range a.touch {
		if tr.at == nil || !ancestorOrSelf(l, tr.at) {
			return false
		}
	}
	return true
}

// movable returns ref when the conjunct may be evaluated inside ref's
// wrapper with the same meaning: a WHERE or ON conjunct of ref's own
// level, every column it reads a plain column of ref, and ref not
// null-extended between the clause and itself. A sublink in it must be
// uncorrelated and without a test expression (a scalar, EXISTS or ARRAY
// subquery): PostgreSQL makes it an initplan, a parameter whose value
// does not depend on the row, and under the guard it is first needed on
// a row the filter keeps. What the sublink reads is judged at its own
// level, and its columns are not ref's (movingCols).
func (r *stmtRewriter) movable(c *conjunct, ref *relRef) *relRef {
	if c.kind == conjHaving || c.level != ref.level {
		return nil
	}
	outside, ok := r.movingCols(c)
	if !ok || len(outside) == 0 && !r.noColumns(c) {
		return nil
	}
	for _, a := range outside {
		if a.ref != ref {
			return nil
		}
	}
	steps := ref.joins
	if c.kind == conjOn {
		k := -1
		for i, s := range steps {
			if s.join == c.join {
				k = i
			}
		}
		if k < 0 {
			return nil
		}
		// The ON of an inner join, or of an outer join on its
		// null-extended side, only filters that side's rows.
		if s := steps[k]; s.join.Jointype != pg.JoinType_JOIN_INNER && !s.nullable() {
			return nil
		}
		steps = steps[k+1:]
	}
	for _, s := range steps {
		if s.nullable() {
			return nil
		}
	}
	return ref
}

// movingCols returns the conjunct's column references outside its
// sublinks — the ones that change when it moves into a wrapper — and
// false when a sublink in it could not move with it.
func (r *stmtRewriter) movingCols(c *conjunct) ([]*colAttr, bool) {
	b := r.barrier()
	ok := true
	var out []*colAttr
	walkNodes(c.node, func(x *pg.Node) bool {
		if !ok {
			return false
		}
		switch v := x.Node.(type) {
		case *pg.Node_SubLink:
			switch v.SubLink.SubLinkType {
			case pg.SubLinkType_EXPR_SUBLINK, pg.SubLinkType_EXISTS_SUBLINK, pg.SubLinkType_ARRAY_SUBLINK:
			default:
				ok = false
			}
			if v.SubLink.Testexpr != nil || r.correlated(v.SubLink) {
				ok = false
			}
			return false
		case *pg.Node_ColumnRef:
			a := b.cols[v.ColumnRef]
			if a == nil {
				ok = false
				return false
			}
			out = append(out, a)
		}
		return true
	})
	return out, ok
}

// inSublink reports whether ref is read inside a sublink of level l (or
// of a level between): a plan of its own, whose rows l's quals never see.
func (r *stmtRewriter) inSublink(ref *relRef, l *scope) bool {
	b := r.barrier()
	for x := ref.level; x != nil && x != l; x = x.up {
		for _, body := range b.sublinks {
			if body == x {
				return true
			}
		}
	}
	return false
}

// noColumns reports whether a conjunct reads no column of its own level
// or an enclosing one: none outside its sublinks, none in a sublink's
// test expression, and every sublink uncorrelated (the columns of a
// sublink's own FROM are its level's business).
func (r *stmtRewriter) noColumns(c *conjunct) bool {
	found := false
	var walk func(n *pg.Node)
	walk = func(n *pg.Node) {
		walkNodes(n, func(x *pg.Node) bool {
			switch v := x.Node.(type) {
			case *pg.Node_SubLink:
				if r.correlated(v.SubLink) {
					found = true
				} else if v.SubLink.Testexpr != nil {
					walk(v.SubLink.Testexpr)
				}
				return false
			case *pg.Node_ColumnRef:
				found = true
			}
			return !found
		})
	}
	walk(c.node)
	return !found
}

// equality splits a conjunct "a = b".
func equality(n *pg.Node) (*pg.Node, *pg.Node, bool) {
	e := n.GetAExpr()
	if e == nil || e.Kind != pg.A_Expr_Kind_AEXPR_OP || e.Lexpr == nil {
		return nil, nil, false
	}
	if name, ok := operatorName(e.Name); !ok || name != "=" {
		return nil, nil, false
	}
	return e.Lexpr, e.Rexpr, true
}

// entitiesOf: a bare column reference is its entities; any other
// expression an entity of its own.
func (r *stmtRewriter) entitiesOf(n *pg.Node) []entity {
	if cr := n.GetColumnRef(); cr != nil {
		if a := r.barrier().cols[cr]; a != nil && len(a.ents) > 0 {
			return a.ents
		}
	}
	return []entity{{node: n}}
}

// equivalence is a union-find over entities linked by equalities.
type equivalence struct {
	parent map[entity]entity
	refs   map[entity][]*relRef // per class root: the governed references in it
}

func (e *equivalence) find(x entity) entity {
	for {
		p, ok := e.parent[x]
		if !ok || p == x {
			return x
		}
		x = p
	}
}

func (e *equivalence) union(a, b entity) {
	ra, rb := e.find(a), e.find(b)
	if ra != rb {
		e.parent[ra] = rb
	}
}

func (e *equivalence) refsOf(x entity) []*relRef { return e.refs[e.find(x)] }

// equivalences links every equality of the statement: conjuncts a = b,
// USING/NATURAL columns, and x IN (SELECT y …).
func (r *stmtRewriter) equivalences() *equivalence {
	b := r.barrier()
	e := &equivalence{parent: map[entity]entity{}, refs: map[entity][]*relRef{}}
	linked := map[entity]bool{}
	link := func(ls, rs []entity) {
		all := append(append([]entity(nil), ls...), rs...)
		for _, x := range all {
			linked[x] = true
			e.union(all[0], x)
		}
	}
	for _, c := range b.conjuncts {
		if l, rr, ok := equality(c.node); ok {
			link(r.entitiesOf(l), r.entitiesOf(rr))
		}
		if sl := c.anyLink; sl != nil {
			if body := b.sublinks[sl]; body != nil && body.outsKnown && len(body.outs) == 1 && len(body.outs[0].ents) > 0 {
				link(r.entitiesOf(sl.Testexpr), body.outs[0].ents)
			}
		}
	}
	for _, u := range b.usingEqs {
		var ls, rs []entity
		for _, h := range u.left {
			ls = append(ls, entity{ref: h.ref, col: h.col})
		}
		for _, h := range u.right {
			rs = append(rs, entity{ref: h.ref, col: h.col})
		}
		if len(ls)+len(rs) > 1 {
			link(ls, rs)
		}
	}
	for x := range linked {
		if x.ref != nil {
			root := e.find(x)
			e.refs[root] = appendRef(e.refs[root], x.ref)
		}
	}
	return e
}

func appendRef(refs []*relRef, ref *relRef) []*relRef {
	for _, x := range refs {
		if x == ref {
			return refs
		}
	}
	return append(refs, ref)
}
