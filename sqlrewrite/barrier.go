package sqlrewrite

import (
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
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

func (r *stmtRewriter) barrier() *barrierState {
	if r.bar == nil {
		r.bar = &barrierState{cols: map[*pg.ColumnRef]*colAttr{}, sublinks: map[*pg.SubLink]*scope{}}
	}
	return r.bar
}

// enterLevel makes sc the level being walked; the returned func restores
// the previous one.
func (r *stmtRewriter) enterLevel(sc *scope) func() {
	b := r.barrier()
	prev := b.level
	sc.up, sc.isLevel, sc.firstRef = prev, true, len(r.refs)
	b.level = sc
	return func() {
		sc.contained = append([]*relRef(nil), r.refs[sc.firstRef:]...)
		if prev != nil {
			prev.reads = append(prev.reads, sc.reads...)
		}
		b.level = prev
	}
}

// withSite walks f with the given site, restoring the previous one.
func (r *stmtRewriter) withSite(k siteKind, f func()) {
	b := r.barrier()
	prev := b.site
	b.site = k
	f()
	b.site = prev
}

// clause registers the conjuncts of a WHERE, ON or HAVING clause held in
// *owner and walks each of them.
func (r *stmtRewriter) clause(sc *scope, owner **pg.Node, kind conjKind, join *pg.JoinExpr) {
	if *owner == nil || r.err != nil {
		return
	}
	b := r.barrier()
	var split func(n *pg.Node)
	split = func(n *pg.Node) {
		if be := n.GetBoolExpr(); be != nil && be.Boolop == pg.BoolExprType_AND_EXPR {
			for _, a := range be.Args {
				split(a)
			}
			return
		}
		if kind == conjHaving && r.hasAggregate(n) {
			// Evaluated on groups, after every scan; PostgreSQL moves
			// only aggregate-free HAVING terms into WHERE.
			r.withSite(siteOutput, func() { r.walkExpr(sc, n) })
			return
		}
		c := &conjunct{node: n, owner: owner, level: b.level, kind: kind, join: join}
		if sl := n.GetSubLink(); sl != nil && sl.SubLinkType == pg.SubLinkType_ANY_SUBLINK {
			c.anyLink = sl
		}
		b.conjuncts = append(b.conjuncts, c)
		b.stack = append(b.stack, c)
		r.withSite(siteQual, func() { r.walkExpr(sc, n) })
		b.stack = b.stack[:len(b.stack)-1]
	}
	split(*owner)
}

// hasAggregate reports whether n calls an aggregate of its own level
// (a built-in aggregate, or any call written as one).
func (r *stmtRewriter) hasAggregate(n *pg.Node) bool {
	found := false
	walkNodes(n, func(x *pg.Node) bool {
		switch v := x.Node.(type) {
		case *pg.Node_SubLink:
			return false
		case *pg.Node_FuncCall:
			fc := v.FuncCall
			names := nameList(fc.Funcname)
			builtin := len(names) == 1 || len(names) == 2 && names[0] == "pg_catalog"
			if fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.AggWithinGroup ||
				builtin && r.snap.Builtins.IsAggregate(names[len(names)-1]) {
				found = true
			}
		}
		return !found
	})
	return found
}

// collecting starts collecting the resolver's marks for one reference.
func (r *stmtRewriter) collecting() *[]colHit {
	var hits []colHit
	r.barrier().hits = &hits
	return &hits
}

// recordColumn attributes one column reference (after the resolver marked
// hits) for the barrier: what it may read, its type, its entities.
func (r *stmtRewriter) recordColumn(sc *scope, node *pg.Node, cr *pg.ColumnRef, hits []colHit) {
	b := r.barrier()
	b.hits = nil
	a := &colAttr{node: node, col: -1}
	var names []string
	star := false
	for _, f := range cr.Fields {
		if f.GetAStar() != nil {
			star = true
		} else {
			names = append(names, strVal(f))
		}
	}
	var types []typ
	addHit := func(h colHit) {
		a.touch = append(a.touch, touchRef{h.ref, h.ref.level})
		for _, in := range h.ref.inner {
			a.touch = append(a.touch, touchRef{in, h.ref.level})
		}
		if vl := h.ref.viewLevel; h.ref.expanded != nil {
			// A view's column is its definition's output.
			switch {
			case vl == nil || !vl.outsKnown || h.col >= len(vl.outs):
				a.unsafeValue = true
			case h.col < 0:
				for _, o := range vl.outs {
					a.unsafeValue = a.unsafeValue || o.unsafe
				}
			default:
				a.unsafeValue = a.unsafeValue || vl.outs[h.col].unsafe
			}
		}
		if h.col < 0 {
			types = append(types, typ{})
			a.ents = append(a.ents, entity{ref: h.ref, col: -1})
			return
		}
		c := h.ref.rel.Columns[h.col]
		types = append(types, typ{c.TypeOID, c.BaseOID})
		a.ents = append(a.ents, entity{ref: h.ref, col: h.col})
	}
	for _, h := range hits {
		addHit(h)
	}
	// Opaque FROM items (subqueries, CTEs, functions) the name may read.
	addOpaque := func(it *fromItem, name string, whole bool) {
		matched := false
		if it.sub != nil && it.sub.outsKnown {
			for _, o := range it.sub.outs {
				if whole || o.name == name {
					matched = true
					a.unsafeValue = a.unsafeValue || o.unsafe
					for _, w := range o.touch {
						a.touch = append(a.touch, touchRef{w, it.at})
					}
					if whole {
						types = append(types, typ{})
					} else {
						types = append(types, o.typ)
					}
					if len(o.ents) > 0 && !whole {
						a.ents = append(a.ents, o.ents...)
					} else {
						a.ents = append(a.ents, entity{item: it, name: o.name})
					}
				}
			}
			if matched || !whole && name != "" {
				return
			}
		}
		for _, w := range it.readable(r) {
			a.touch = append(a.touch, touchRef{w, it.at})
		}
		// Columns not known: a subquery's or CTE's may be computed. A
		// function's are what the function scan returns, and a recursive
		// CTE's own name reads its work table; neither is pulled up.
		if it.sub != nil {
			a.unsafeValue = true
		}
		types = append(types, typ{})
		a.ents = append(a.ents, entity{item: it, name: name})
	}
	switch {
	case star && len(names) == 0:
		for _, it := range opaqueItems(sc.items) {
			addOpaque(it, "", true)
		}
	case len(names) == 1 && !star:
		// An unqualified name: every opaque item of every level up to the
		// one where the resolver found it may be what it names.
		for s := sc; s != nil; s = s.parent {
			items := opaqueItems(s.items)
			found := false
			for _, it := range items {
				if it.sub == nil || !it.sub.outsKnown || it.sub.hasOut(names[0]) {
					addOpaque(it, names[0], false)
					found = true
				}
			}
			for _, h := range hits {
				if holdsRef(s.items, h.ref) {
					found = true
				}
			}
			if found {
				break
			}
		}
		// A whole-row reference to an opaque item.
		if it := findItem(sc, names[0]); it != nil && it.ref == nil && it.children == nil {
			addOpaque(it, "", true)
		}
	default:
		// q.c, q.*, q.c.f: q may be an opaque item.
		if it := findItem(sc, names[0]); it != nil && it.ref == nil && it.children == nil {
			if star && len(names) == 1 {
				addOpaque(it, "", true)
			} else {
				addOpaque(it, names[1], false)
			}
		}
	}
	// A type only for c and t.c (t a FROM item): a.b.c may be a field of
	// a composite column, a star has no scalar type.
	plain := !star && (len(names) == 1 || len(names) == 2 && findItem(sc, names[0]) != nil)
	if plain && (len(types) == 1 || len(types) > 1 && allSame(types)) {
		a.typ = types[0]
	}
	if plain && len(hits) == 1 && hits[0].col >= 0 && len(a.touch) == 1+len(hits[0].ref.inner) && len(types) == 1 {
		a.ref, a.col = hits[0].ref, hits[0].col
	}
	if len(types) == 0 {
		// Nothing known answers to the name: it could read anything.
		for _, w := range r.refs {
			a.touch = append(a.touch, touchRef{w, nil})
		}
	}
	b.cols[cr] = a
	if b.level != nil {
		for _, tr := range a.touch {
			b.level.reads = append(b.level.reads, tr.ref)
		}
	}
	for _, c := range b.stack {
		c.cols = append(c.cols, a)
	}
	if b.site == siteUnknown {
		b.unknown = append(b.unknown, a.touch...)
	}
}

func allSame(ts []typ) bool {
	for _, t := range ts[1:] {
		if t != ts[0] {
			return false
		}
	}
	return ts[0].oid != 0
}

// opaqueItems lists the items (join members included) whose columns the
// resolver cannot see: subqueries, CTEs, functions.
func opaqueItems(items []*fromItem) []*fromItem {
	var out []*fromItem
	for _, it := range items {
		switch {
		case it.ref != nil:
		case len(it.children) > 0:
			out = append(out, opaqueItems(it.children)...)
		default:
			out = append(out, it)
		}
	}
	return out
}

func holdsRef(items []*fromItem, ref *relRef) bool {
	for _, it := range items {
		if it.ref == ref || holdsRef(it.children, ref) {
			return true
		}
	}
	return false
}

// readable are the governed references an opaque item may read: those
// within it and those its expressions reference outside it (a LATERAL
// subquery's correlated columns).
func (it *fromItem) readable(r *stmtRewriter) []*relRef {
	if it.unknown {
		return r.refs
	}
	if it.sub != nil {
		return append(append([]*relRef(nil), it.sub.contained...), it.sub.reads...)
	}
	return it.contained
}

func (s *scope) hasOut(name string) bool {
	for _, o := range s.outs {
		if o.name == name {
			return true
		}
	}
	return false
}

// levelOutputs works out the output columns of a (non set-operation)
// level from its target list, where certain.
func (r *stmtRewriter) levelOutputs(s *pg.SelectStmt, sc *scope) {
	b := r.barrier()
	sc.outsKnown = true
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			sc.outsKnown = false
			return
		}
		cr := rt.Val.GetColumnRef()
		if cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			if !r.starOutputs(sc, cr) {
				sc.outsKnown = false
				return
			}
			continue
		}
		o := outCol{name: rt.Name}
		if cr != nil {
			if o.name == "" {
				o.name = strVal(cr.Fields[len(cr.Fields)-1])
			}
			if a := b.cols[cr]; a != nil {
				o.typ = a.typ
				o.ents = a.ents
				o.unsafe = a.unsafeValue
				for _, tr := range a.touch {
					o.touch = append(o.touch, tr.ref)
				}
			} else {
				o.unsafe = true
			}
		} else {
			o.unsafe = !r.typer().safe(rt.Val)
			walkNodes(rt.Val, func(x *pg.Node) bool {
				if c := x.GetColumnRef(); c != nil {
					if a := b.cols[c]; a != nil {
						for _, tr := range a.touch {
							o.touch = append(o.touch, tr.ref)
						}
					}
				}
				return true
			})
			// Subqueries in the expression read what they read.
			walkNodes(rt.Val, func(x *pg.Node) bool {
				if sl := x.GetSubLink(); sl != nil {
					if ss := b.sublinks[sl]; ss != nil {
						o.touch = append(o.touch, ss.contained...)
						o.touch = append(o.touch, ss.reads...)
					}
				}
				return true
			})
			if tc := rt.Val.GetTypeCast(); tc != nil {
				o.typ = r.typer().typeOf(rt.Val)
			}
		}
		sc.outs = append(sc.outs, o)
	}
}

// valuesOutputs works out the output columns of a VALUES level: columnN,
// each reading what its expressions read, typed where every row has a
// literal of one type.
func (r *stmtRewriter) valuesOutputs(s *pg.SelectStmt, sc *scope) {
	b := r.barrier()
	var outs []outCol
	for _, row := range s.ValuesLists {
		l := row.GetList()
		if l == nil {
			return
		}
		for i, e := range l.Items {
			if i >= len(outs) {
				outs = append(outs, outCol{name: "column" + strconv.Itoa(i+1), typ: r.typer().typeOf(e)})
			} else if outs[i].typ != r.typer().typeOf(e) {
				outs[i].typ = typ{}
			}
			if !r.typer().safe(e) {
				outs[i].unsafe = true
			}
			walkNodes(e, func(x *pg.Node) bool {
				if c := x.GetColumnRef(); c != nil {
					if a := b.cols[c]; a != nil {
						for _, tr := range a.touch {
							outs[i].touch = append(outs[i].touch, tr.ref)
						}
					}
				}
				if sl := x.GetSubLink(); sl != nil {
					if ss := b.sublinks[sl]; ss != nil {
						outs[i].touch = append(outs[i].touch, ss.contained...)
						outs[i].touch = append(outs[i].touch, ss.reads...)
					}
				}
				return true
			})
		}
	}
	for i := range outs {
		if outs[i].typ.oid == catalog.OIDUnknown {
			outs[i].typ = known(catalog.OIDText) // an untyped string column of VALUES is text
		}
	}
	sc.outs, sc.outsKnown = outs, true
}

// starOutputs appends the columns a * or t.* expands to; false when they
// are not known (an opaque item without known outputs, or a join with
// USING/NATURAL, whose merged columns change the expansion).
func (r *stmtRewriter) starOutputs(sc *scope, cr *pg.ColumnRef) bool {
	var items []*fromItem
	if len(cr.Fields) == 1 {
		items = sc.items
	} else if len(cr.Fields) == 2 {
		it := findItem(sc, strVal(cr.Fields[0]))
		if it == nil {
			return false
		}
		items = []*fromItem{it}
	} else {
		return false
	}
	if sc.merged {
		return false
	}
	var add func(it *fromItem) bool
	add = func(it *fromItem) bool {
		switch {
		case it.ref != nil:
			vl := it.ref.viewLevel
			for i, name := range it.ref.visibleCols {
				c := it.ref.rel.Columns[i]
				o := outCol{name: name, typ: typ{c.TypeOID, c.BaseOID}, touch: append([]*relRef{it.ref}, it.ref.inner...),
					ents: []entity{{ref: it.ref, col: i}}}
				if it.ref.expanded != nil {
					o.unsafe = vl == nil || !vl.outsKnown || i >= len(vl.outs) || vl.outs[i].unsafe
				}
				sc.outs = append(sc.outs, o)
			}
		case len(it.children) > 0:
			for _, ch := range it.children {
				if !add(ch) {
					return false
				}
			}
		case it.sub != nil && it.sub.outsKnown:
			sc.outs = append(sc.outs, it.sub.outs...)
		default:
			return false
		}
		return true
	}
	for _, it := range items {
		if !add(it) {
			return false
		}
	}
	return true
}

// renameOutputs applies an alias column list to a level's outputs.
func renameOutputs(sc *scope, names []*pg.Node) {
	if sc == nil || !sc.outsKnown || len(names) == 0 {
		return
	}
	if len(names) > len(sc.outs) {
		sc.outsKnown = false
		return
	}
	outs := append([]outCol(nil), sc.outs...)
	for i, n := range names {
		outs[i].name = strVal(n)
	}
	sc.outs = outs
}

// noteJoin records, for every governed reference in a join's sides, the
// join it is under (for the outer-join rule of moving a conjunct).
func noteJoin(j *pg.JoinExpr, left, right []*fromItem) {
	var mark func(items []*fromItem, rightSide bool)
	mark = func(items []*fromItem, rightSide bool) {
		for _, it := range items {
			if it.ref != nil {
				it.ref.joins = append([]joinStep{{j, rightSide}}, it.ref.joins...)
			}
			mark(it.children, rightSide)
		}
	}
	mark(left, false)
	mark(right, true)
}

// joinStep: a reference is on one side of a join.
type joinStep struct {
	join  *pg.JoinExpr
	right bool
}

// nullable reports whether the side is null-extended by the join.
func (s joinStep) nullable() bool {
	switch s.join.Jointype {
	case pg.JoinType_JOIN_INNER:
		return false
	case pg.JoinType_JOIN_LEFT:
		return s.right
	case pg.JoinType_JOIN_RIGHT:
		return !s.right
	}
	return true
}

// usingEq is the equality a USING or NATURAL join adds between its sides'
// columns of one name: the governed columns on each side, and whether a
// side also has items whose columns are not known.
type usingEq struct {
	left, right []colHit
	opaque      bool
}

func (r *stmtRewriter) noteUsing(u usingEq) {
	b := r.barrier()
	b.usingEqs = append(b.usingEqs, u)
}

// ---- the decision ----

func (r *stmtRewriter) typer() *exprTyper {
	b := r.barrier()
	return &exprTyper{b: r.snap.Builtins, cols: b.cols, params: r.env.ParamTypes, sublinks: b.sublinks,
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
		touches := r.touches(c, classes)
		if len(touches) == 0 {
			continue
		}
		v := verdict{c: c, touches: touches, safe: r.conjunctSafe(t, c)}
		if len(touches) == 1 {
			v.mover = movable(c, touches[0])
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
func (r *stmtRewriter) touches(c *conjunct, classes *equivalence) []*relRef {
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
	// A column-free volatile conjunct is evaluated per row of its level.
	if len(c.cols) == 0 && r.typer().volatile(c.node) {
		for _, ref := range c.level.contained {
			add(ref)
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
// referenced in its WHERE only, and a WHERE that is not volatile. Its WHERE terms then become quals of the join,
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
	return !t.volatile(q.WhereClause)
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
// level, every column it reads a plain column of ref, no sublink, and
// ref not null-extended between the clause and itself.
func movable(c *conjunct, ref *relRef) *relRef {
	if c.kind == conjHaving || c.level != ref.level || len(c.cols) == 0 {
		return nil
	}
	for _, a := range c.cols {
		if a.ref != ref {
			return nil
		}
	}
	hasSub := false
	walkNodes(c.node, func(x *pg.Node) bool {
		if x.GetSubLink() != nil {
			hasSub = true
		}
		return !hasSub
	})
	if hasSub {
		return nil
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
