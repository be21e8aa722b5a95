package sqlrewrite

// What the barrier decision (barrier.go) needs is recorded while the
// statement is walked: the query levels and how they nest, every conjunct
// of WHERE, ON and HAVING, what each column reference may read, and the
// output columns of each level.

import (
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
)

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
	b, t := r.barrier(), r.typer()
	sc.outsKnown = true
	for _, item := range s.TargetList {
		rt := item.GetResTarget()
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
			o.unsafe = !t.safe(rt.Val)
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
				o.typ = t.typeOf(rt.Val)
			}
		}
		sc.outs = append(sc.outs, o)
	}
}

// valuesOutputs works out the output columns of a VALUES level: columnN,
// each reading what its expressions read, typed where every row has a
// literal of one type.
func (r *stmtRewriter) valuesOutputs(s *pg.SelectStmt, sc *scope) {
	b, t := r.barrier(), r.typer()
	var outs []outCol
	for _, row := range s.ValuesLists {
		l := row.GetList()
		if l == nil {
			return
		}
		for i, e := range l.Items {
			if i >= len(outs) {
				outs = append(outs, outCol{name: "column" + strconv.Itoa(i+1), typ: t.typeOf(e)})
			} else if outs[i].typ != t.typeOf(e) {
				outs[i].typ = typ{}
			}
			if !t.safe(e) {
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
