package sqlrewrite

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/sqlstate"
)

// scope is one query level: the CTE names it can see and the FROM items
// whose columns unqualified and qualified references resolve against.
type scope struct {
	parent *scope
	ctes   map[string]bool
	items  []*fromItem

	// What the barrier needs of a query level (barrier.go): the level it
	// is nested in, the governed references within it, its output
	// columns where known, whether a USING/NATURAL join merges columns,
	// and the levels of its CTEs.
	up        *scope
	isLevel   bool
	firstRef  int
	contained []*relRef
	reads     []*relRef // governed references its column references may read (outer ones too)
	outs      []outCol
	outsKnown bool
	merged    bool
	cteScopes map[string]*scope
}

func (s *scope) hasCTE(name string) bool {
	for ; s != nil; s = s.parent {
		if s.ctes[name] {
			return true
		}
	}
	return false
}

// cteScope is the level of the CTE a name refers to (nil while a
// recursive CTE is being walked).
func (s *scope) cteScope(name string) *scope {
	for ; s != nil; s = s.parent {
		if s.ctes[name] {
			return s.cteScopes[name]
		}
	}
	return nil
}

// fromItem is one visible entry of a FROM list. A relation has ref set; an
// aliased join has children (its members are visible only through it); a
// subquery, CTE or function is opaque (its inner references were analysed
// where it was defined).
type fromItem struct {
	visible  string
	ref      *relRef
	children []*fromItem

	// For the barrier (barrier.go): an opaque item's level (a subquery or
	// CTE), or the governed references in its arguments (a function), or
	// unknown contents (a recursive CTE's own name); at is the level whose
	// FROM holds the item.
	sub       *scope
	contained []*relRef
	unknown   bool
	at        *scope
}

// selectStatement analyses one SELECT (any level) and rewrites its FROM
// items in place. parent is the enclosing level for correlated references.
// It returns the level's scope (nil when nothing was walked).
func (r *stmtRewriter) selectStatement(s *pg.SelectStmt, parent *scope) *scope {
	if s == nil || r.err != nil {
		return nil
	}
	if s.IntoClause != nil {
		r.fail(denyf("SELECT INTO is not allowed through pgranger (user %q)", r.sess.Subject.User))
		return nil
	}
	if len(s.LockingClause) > 0 {
		r.fail(denyf("SELECT … FOR UPDATE/SHARE is not allowed through pgranger (user %q)", r.sess.Subject.User))
		return nil
	}
	sc := &scope{parent: parent}
	defer r.enterLevel(sc)()
	if s.WithClause != nil {
		r.withClause(s.WithClause, sc)
	}
	output := func(parts ...any) { r.withSite(siteOutput, func() { r.exprs(sc, parts...) }) }
	if s.Op != pg.SetOperation_SETOP_NONE && s.Op != pg.SetOperation_SET_OPERATION_UNDEFINED {
		r.selectStatement(s.Larg, sc)
		r.selectStatement(s.Rarg, sc)
		output(s.SortClause, s.LimitOffset, s.LimitCount)
		return sc
	}
	for _, item := range s.FromClause {
		r.fromItem(item, sc, &sc.items)
		if r.err != nil {
			return sc
		}
	}
	r.checkNameConflicts(sc.items)
	r.targetList(s.TargetList)
	output(s.TargetList)
	r.clause(sc, &s.WhereClause, conjWhere, nil)
	output(s.GroupClause)
	r.clause(sc, &s.HavingClause, conjHaving, nil)
	output(s.WindowClause, s.SortClause, s.DistinctClause, s.ValuesLists, s.LimitOffset, s.LimitCount)
	if len(s.ValuesLists) == 0 {
		r.levelOutputs(s, sc)
	} else {
		r.valuesOutputs(s, sc)
	}
	return sc
}

func (r *stmtRewriter) withClause(w *pg.WithClause, sc *scope) {
	sc.ctes = map[string]bool{}
	if w.Recursive {
		for _, n := range w.Ctes {
			sc.ctes[n.GetCommonTableExpr().GetCtename()] = true
		}
	}
	for _, n := range w.Ctes {
		cte := n.GetCommonTableExpr()
		if cte == nil {
			r.fail(errorf(sqlstate.FeatureNotSupported, "unexpected WITH item"))
			return
		}
		sel := cte.Ctequery.GetSelectStmt()
		switch {
		case sel != nil:
			// A non-recursive CTE sees the ones before it, not itself.
			body := r.selectStatement(sel, sc)
			renameOutputs(body, cte.Aliascolnames)
			if sc.cteScopes == nil {
				sc.cteScopes = map[string]*scope{}
			}
			sc.cteScopes[cte.Ctename] = body
		case isDMLNode(cte.Ctequery):
			// A data-modifying WITH item: the rules of its statement
			// (dml.go); PostgreSQL allows it only at the top level.
			r.dmlStatement(cte.Ctequery, sc)
		default:
			r.fail(denyf("WITH (%s) is not allowed through pgranger (user %q)", statementKind(cte.Ctequery), r.sess.Subject.User))
			return
		}
		sc.ctes[cte.Ctename] = true
		if cte.SearchClause != nil || cte.CycleClause != nil {
			r.withSite(siteOutput, func() { r.exprs(sc, cte.SearchClause, cte.CycleClause) })
		}
	}
}

// fromItem analyses one FROM entry and appends what it makes visible to out.
func (r *stmtRewriter) fromItem(n *pg.Node, sc *scope, out *[]*fromItem) {
	if r.err != nil {
		return
	}
	switch v := n.Node.(type) {
	case *pg.Node_RangeVar:
		if it := r.rangeVar(n, v.RangeVar, nil, sc); it != nil {
			*out = append(*out, it)
		}
	case *pg.Node_RangeTableSample:
		rv := v.RangeTableSample.Relation.GetRangeVar()
		if rv == nil {
			r.fail(errorf(sqlstate.FeatureNotSupported, "TABLESAMPLE of this kind of FROM item is not supported"))
			return
		}
		r.withSite(siteUnknown, func() { r.exprs(sc, v.RangeTableSample.Args, v.RangeTableSample.Repeatable) })
		if it := r.rangeVar(n, rv, v.RangeTableSample, sc); it != nil {
			*out = append(*out, it)
		}
	case *pg.Node_RangeSubselect:
		sub := v.RangeSubselect
		inner := &scope{parent: sc.parent, ctes: sc.ctes}
		if sub.Lateral {
			inner = sc
		}
		sel := sub.Subquery.GetSelectStmt()
		if sel == nil {
			r.fail(errorf(sqlstate.FeatureNotSupported, "unsupported subquery in FROM"))
			return
		}
		body := r.selectStatement(sel, inner)
		if sub.Alias != nil {
			renameOutputs(body, sub.Alias.Colnames)
		}
		*out = append(*out, &fromItem{visible: aliasName(sub.Alias), sub: body, at: r.barrier().level})
	case *pg.Node_RangeFunction:
		// Functions in FROM may refer to earlier FROM items (implicit
		// LATERAL); they are evaluated for rows those items return.
		first := len(r.refs)
		r.withSite(siteOutput, func() { r.exprs(sc, v.RangeFunction.Functions) })
		name := aliasName(v.RangeFunction.Alias)
		if name == "" && len(v.RangeFunction.Functions) > 0 {
			if l := v.RangeFunction.Functions[0].GetList(); l != nil && len(l.Items) > 0 {
				if fc := l.Items[0].GetFuncCall(); fc != nil && len(fc.Funcname) > 0 {
					name = strVal(fc.Funcname[len(fc.Funcname)-1])
				}
			}
		}
		*out = append(*out, &fromItem{visible: name, contained: append([]*relRef(nil), r.refs[first:]...), at: r.barrier().level})
	case *pg.Node_JoinExpr:
		j := v.JoinExpr
		var members []*fromItem
		r.fromItem(j.Larg, sc, &members)
		left := len(members)
		// The right side (a LATERAL subquery or function) and ON see the
		// left side; the items before the join stay visible too, which
		// over-approximates what ON can read and so only adds checks.
		withLeft := func() *scope {
			return &scope{parent: sc.parent, ctes: sc.ctes, items: append(append([]*fromItem{}, sc.items...), members...)}
		}
		r.fromItem(j.Rarg, withLeft(), &members)
		if r.err != nil {
			return
		}
		noteJoin(j, members[:left], members[left:])
		r.joinColumns(j, members[:left], members[left:])
		r.clause(withLeft(), &j.Quals, conjOn, j)
		if j.Alias != nil {
			*out = append(*out, &fromItem{visible: j.Alias.Aliasname, children: members})
		} else {
			*out = append(*out, members...)
			if j.JoinUsingAlias != nil {
				*out = append(*out, &fromItem{visible: j.JoinUsingAlias.Aliasname, children: members})
			}
		}
	case *pg.Node_RangeTableFunc, *pg.Node_JsonTable:
		first := len(r.refs)
		r.withSite(siteUnknown, func() { r.exprs(sc, n) })
		*out = append(*out, &fromItem{contained: append([]*relRef(nil), r.refs[first:]...), at: r.barrier().level})
	default:
		r.fail(errorf(sqlstate.FeatureNotSupported, "unsupported FROM item"))
	}
}

// checkNameConflicts refuses a FROM list where a relation that becomes a
// wrapper without an alias shares its name with another item.
// PostgreSQL accepts two unaliased relations of one name from different
// schemas (FROM sales.orders, public.orders) and tells them apart by
// schema, but a wrapper is a subquery aliased with the bare name, which
// conflicts with the other item. The members of an aliased join are a
// namespace of their own.
func (r *stmtRewriter) checkNameConflicts(items []*fromItem) {
	seen := map[string]*fromItem{}
	for _, it := range items {
		if r.err != nil {
			return
		}
		if it.visible != "" {
			if prev, dup := seen[it.visible]; dup && prev != it {
				for _, x := range []*fromItem{prev, it} {
					if ref := x.ref; ref != nil && ref.unaliased && ref.pol != nil && ref.pol.wrap && !ref.pol.super {
						r.fail(errorf(sqlstate.FeatureNotSupported, "two FROM items are named %s; pgranger rewrites %s.%s for user %q (select) as a subquery named %s: give the tables aliases",
							it.visible, ref.rel.Schema, ref.rel.Name, r.sess.Subject.User, it.visible))
						return
					}
				}
			}
			seen[it.visible] = it
		}
		if len(it.children) > 0 {
			r.checkNameConflicts(it.children)
		}
	}
}

// joinColumns marks the columns a USING or NATURAL join compares, and
// records the equalities for the barrier.
func (r *stmtRewriter) joinColumns(j *pg.JoinExpr, left, right []*fromItem) {
	if j.IsNatural || len(j.UsingClause) > 0 {
		r.barrier().level.merged = true
	}
	if j.IsNatural {
		opaque := len(opaqueItems(left)) > 0 || len(opaqueItems(right)) > 0
		// NATURAL compares every common column; when a side is opaque we
		// cannot know them, so every column of the known side counts.
		lnames, lok := visibleColumnSet(left)
		rnames, rok := visibleColumnSet(right)
		names := map[string]bool{}
		for _, side := range [][]*fromItem{left, right} {
			for _, it := range side {
				for name := range columnsOf(it) {
					if (!lok || !rok) || (lnames[name] && rnames[name]) {
						names[name] = true
					}
				}
			}
		}
		for name := range names {
			r.noteUsing(usingEq{left: r.markJoinColumn(left, name), right: r.markJoinColumn(right, name), opaque: opaque})
		}
		return
	}
	for _, u := range j.UsingClause {
		name := strVal(u)
		opaque := len(opaqueItems(left)) > 0 || len(opaqueItems(right)) > 0
		r.noteUsing(usingEq{left: r.markJoinColumn(left, name), right: r.markJoinColumn(right, name), opaque: opaque})
	}
}

// markJoinColumn marks a column of one side of a join and returns the
// governed columns marked.
func (r *stmtRewriter) markJoinColumn(side []*fromItem, name string) []colHit {
	hits := r.collecting()
	for _, it := range side {
		markColumn(it, name)
	}
	r.barrier().hits = nil
	return *hits
}

func visibleColumnSet(items []*fromItem) (map[string]bool, bool) {
	out := map[string]bool{}
	for _, it := range items {
		if it.ref == nil && it.children == nil {
			return nil, false
		}
		if it.children != nil {
			sub, ok := visibleColumnSet(it.children)
			if !ok {
				return nil, false
			}
			for k := range sub {
				out[k] = true
			}
			continue
		}
		for _, c := range it.ref.visibleCols {
			out[c] = true
		}
	}
	return out, true
}

func columnsOf(it *fromItem) map[string]bool {
	out := map[string]bool{}
	if it.ref != nil {
		for _, c := range it.ref.visibleCols {
			out[c] = true
		}
	}
	for _, ch := range it.children {
		for c := range columnsOf(ch) {
			out[c] = true
		}
	}
	return out
}

// rangeVar resolves a relation reference. A CTE name shadows a table; a
// catalog relation is schema-qualified so the backend resolves exactly the
// relation that was checked; a governed one is recorded for access checks
// and wrapping in finish.
func (r *stmtRewriter) rangeVar(node *pg.Node, rv *pg.RangeVar, sample *pg.RangeTableSample, sc *scope) *fromItem {
	if rv.Schemaname == "" && rv.Catalogname == "" && sc.hasCTE(rv.Relname) {
		name := rv.Relname
		body := sc.cteScope(rv.Relname)
		if rv.Alias != nil {
			name = rv.Alias.Aliasname
			if body != nil && len(rv.Alias.Colnames) > 0 {
				renamed := *body
				renameOutputs(&renamed, rv.Alias.Colnames)
				body = &renamed
			}
		}
		return &fromItem{visible: name, sub: body, unknown: body == nil, at: r.barrier().level}
	}
	rel := r.resolveRelation(rv)
	if rel == nil {
		return nil
	}
	if rv.Schemaname == "" && !r.resolvesUnqualified(rel) {
		rv.Schemaname = rel.Schema
		r.changed = true
	}
	if rv.Catalogname != "" {
		rv.Catalogname = ""
		r.changed = true
	}
	ref := &relRef{rel: rel, node: node, rv: rv, sample: sample, unaliased: rv.Alias == nil, st: r, level: r.barrier().level}
	ref.visibleCols = make([]string, len(rel.Columns))
	for i, c := range rel.Columns {
		ref.visibleCols[i] = c.Name
	}
	visible := rel.Name
	if rv.Alias != nil {
		visible = rv.Alias.Aliasname
		for i, cn := range rv.Alias.Colnames {
			if i < len(ref.visibleCols) {
				ref.visibleCols[i] = strVal(cn)
			}
		}
	}
	if rel.IsSystem() {
		// A view definition is the administrator's choice of what to
		// expose, so inside one the catalog rule does not apply.
		if reason, denied := deniedCatalogRelation(rel.Name); denied && r.trusted == 0 {
			r.fail(denyf("reading %s.%s is not allowed through pgranger (%s; user %q)", rel.Schema, rel.Name, reason, r.sess.Subject.User))
			return nil
		}
		return &fromItem{visible: visible, ref: ref}
	}
	pol := r.relationPolicy(rel)
	if pol == nil {
		return nil
	}
	ref.pol = pol
	ref.trusted = r.trusted > 0
	ref.read = map[int]bool{}
	r.refs = append(r.refs, ref)
	if rel.Kind == catalog.KindView && !pol.super {
		if sample != nil {
			r.fail(errorf(sqlstate.FeatureNotSupported, "TABLESAMPLE cannot be applied to view %s.%s", rel.Schema, rel.Name))
			return nil
		}
		first := len(r.refs)
		ref.expanded = r.expandView(ref)
		ref.inner = append([]*relRef(nil), r.refs[first:]...)
	}
	return &fromItem{visible: visible, ref: ref, at: r.barrier().level}
}

// maxViewDepth bounds views defined over views.
const maxViewDepth = 32

// expandView parses a view's definition and analyses it as a query of its
// own (docs/policy-semantics.md, "Resources"): the view is a resource of its own for access, and the
// relations it reads keep their masks and row filters for this user, so a
// view never launders either. Inside the definition access is not checked
// again — granting a view is how Ranger administrators expose a part of a
// table — and the function and catalog rules of user SQL do not apply;
// names resolve with pg_catalog alone (the definition comes schema-qualified
// from the catalog), never with the session's search_path.
func (r *stmtRewriter) expandView(ref *relRef) *pg.SelectStmt {
	rel := ref.rel
	if r.trusted >= maxViewDepth {
		r.fail(errorf(sqlstate.StatementTooComplex, "views nested deeper than %d levels at %s.%s", maxViewDepth, rel.Schema, rel.Name))
		return nil
	}
	tree, err := parse(rel.ViewDef, noLimit, noLimit)
	if err != nil && err.Code == sqlstate.StatementTooComplex {
		r.fail(denyf("the definition of view %s.%s cannot be analysed (%s): access denied for user %q", rel.Schema, rel.Name, strings.TrimPrefix(err.Message, "pgranger: "), r.sess.Subject.User))
		return nil
	}
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		r.fail(denyf("the definition of view %s.%s cannot be analysed: access denied for user %q", rel.Schema, rel.Name, r.sess.Subject.User))
		return nil
	}
	def := tree.Stmts[0].Stmt.GetSelectStmt()
	savedPath := r.searchPath
	r.searchPath = []string{"pg_catalog"}
	r.trusted++
	ref.viewLevel = r.selectStatement(def, nil)
	r.trusted--
	r.searchPath = savedPath
	return def
}

// resolvesUnqualified reports whether the backend, given the bare name,
// would find rel anyway without any chance of another match: true only for
// pg_catalog relations while pg_catalog is searched first, both in the
// session's path and in the default one (the backend's real path can differ
// from pgranger's copy, but only among paths that pass SET, which puts
// pg_catalog first, and the default). Everything else is qualified.
func (r *stmtRewriter) resolvesUnqualified(rel *catalog.Relation) bool {
	if rel.Schema != "pg_catalog" {
		return false
	}
	for _, p := range [][]string{r.searchPath, r.sess.DefaultSearchPath} {
		path := catalog.EffectivePath(p, r.sess.Subject.User)
		if len(path) == 0 || path[0] != "pg_catalog" {
			return false
		}
	}
	return true
}

func (r *stmtRewriter) resolveRelation(rv *pg.RangeVar) *catalog.Relation {
	if rv.Catalogname != "" && rv.Catalogname != r.sess.Database {
		r.fail(errorf(sqlstate.FeatureNotSupported, "cross-database references are not implemented: %s.%s.%s", rv.Catalogname, rv.Schemaname, rv.Relname))
		return nil
	}
	if rv.Relpersistence == "t" {
		r.fail(denyf("temporary relations are not allowed through pgranger (user %q)", r.sess.Subject.User))
		return nil
	}
	lookup := func(s *catalog.Snapshot) (*catalog.Relation, bool) {
		if rv.Schemaname != "" {
			if rv.Schemaname == "pg_temp" || len(rv.Schemaname) > 8 && rv.Schemaname[:8] == "pg_temp_" {
				return nil, false
			}
			return s.Lookup(rv.Schemaname, rv.Relname)
		}
		return s.Resolve(rv.Relname, r.searchPath, r.sess.Subject.User)
	}
	rel, ok := lookup(r.snap)
	if !ok && r.env.Refresh != nil {
		if s, err := r.env.Refresh(r.ctx); err == nil && s != nil {
			r.snap = s
			rel, ok = lookup(s)
		}
	}
	if !ok {
		name := rv.Relname
		if rv.Schemaname != "" {
			name = rv.Schemaname + "." + rv.Relname
		}
		r.fail(&Error{Code: sqlstate.UndefinedTable, Message: "relation \"" + name + "\" does not exist", Position: rv.Location + 1})
		return nil
	}
	return rel
}

func aliasName(a *pg.Alias) string {
	if a == nil {
		return ""
	}
	return a.Aliasname
}

// deniedCatalogRelations leak data or other users' activity
// (docs/security.md, "Mechanisms": Catalog relations): statistics hold sampled column values, pg_stat_activity and
// friends show other sessions' statements (which include rewritten policy
// text), large objects bypass table policies.
var deniedCatalogRelations = map[string]string{
	"pg_stats":                     "column statistics hold sampled values",
	"pg_stats_ext":                 "column statistics hold sampled values",
	"pg_stats_ext_exprs":           "column statistics hold sampled values",
	"pg_statistic":                 "column statistics hold sampled values",
	"pg_statistic_ext_data":        "column statistics hold sampled values",
	"pg_stat_activity":             "it shows other sessions' statements",
	"pg_stat_statements":           "it shows other sessions' statements",
	"pg_stat_statements_info":      "it shows other sessions' statements",
	"pg_prepared_xacts":            "it shows other sessions' transactions",
	"pg_prepared_statements":       "it shows rewritten statements",
	"pg_cursors":                   "it shows rewritten statements",
	"pg_largeobject":               "large objects are not governed",
	"pg_largeobject_metadata":      "large objects are not governed",
	"pg_stat_replication":          "it shows server connections",
	"pg_backend_memory_contexts":   "it shows server internals",
	"pg_locks":                     "it shows other sessions' activity",
	"pg_file_settings":             "it reads server configuration files",
	"pg_hba_file_rules":            "it reads server configuration files",
	"pg_ident_file_mappings":       "it reads server configuration files",
	"pg_config":                    "it shows server internals",
	"pg_shmem_allocations":         "it shows server internals",
	"pg_replication_origin_status": "it shows replication state",
}

// deniedCatalogRelation applies deniedCatalogRelations and, by prefix,
// the statistics views: pg_stat_* and pg_statio_* count the rows of
// governed tables (n_live_tup counts rows a filter hides) and show other
// sessions. pg_statistic_ext, which holds definitions (psql \d lists
// them), stays readable.
func deniedCatalogRelation(name string) (string, bool) {
	if reason, denied := deniedCatalogRelations[name]; denied {
		return reason, true
	}
	if strings.HasPrefix(name, "pg_stat_") || strings.HasPrefix(name, "pg_statio_") {
		return "statistics views count the rows of governed tables and show other sessions", true
	}
	return "", false
}
