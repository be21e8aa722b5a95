package sqlrewrite

import (
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
)

// relPolicy is what Ranger says about one relation for this identity:
// per-column access and masks, and the row filter. It is computed once per
// relation per statement (and cached with the whole rewrite).
type relPolicy struct {
	rel      *catalog.Relation
	resource policy.Resource // Database/Table of the governing (root) relation
	super    bool

	colAccess []policy.Decision
	masks     []policy.Mask
	filter    policy.RowFilter
	// wrap: a mask, a filter or a column without select access applies;
	// wrapTrusted: a mask or a filter applies (what a reference inside a
	// view definition needs, where access is the view's).
	wrap, wrapTrusted bool
}

// relRef is one governed reference in FROM.
type relRef struct {
	rel         *catalog.Relation
	pol         *relPolicy // nil for pg_catalog / information_schema relations
	node        *pg.Node   // the FROM node to replace with the wrapper
	rv          *pg.RangeVar
	sample      *pg.RangeTableSample
	visibleCols []string // column names as the query sees them (alias column lists applied)
	unaliased   bool

	read          map[int]bool // column indexes the statement may read
	qualifiedRefs []qualifiedRef
	// trusted marks a reference inside a view definition: no access check,
	// masks and filters still apply. expanded is a view's analysed
	// definition, which replaces the reference.
	trusted  bool
	expanded *pg.SelectStmt

	// dml is set for the relation an INSERT, UPDATE, DELETE, MERGE, COPY
	// FROM or TRUNCATE writes (dml.go); such a reference is never wrapped.
	// cur points at the column reference being resolved, and nodes
	// collects those resolved to this relation (for masking in place).
	dml   *dmlTarget
	cur   **pg.Node
	nodes []colNode

	// For the barrier (barrier.go): the rewriter (whose resolver marks
	// are collected), the query level the reference is in, the joins it
	// is under (outermost first) and, for a view, the governed references
	// its definition reads and the level of its definition (whose outputs
	// say which view columns are computed).
	st        *stmtRewriter
	level     *scope
	joins     []joinStep
	inner     []*relRef
	viewLevel *scope
}

func (ref *relRef) dmlKind() string {
	if ref.dml != nil {
		return ref.dml.kind
	}
	return "a query"
}

// qualifiedRef is a schema-qualified column reference (s.t.c); once the
// relation becomes a wrapper named t, its first strip fields are dropped.
// shadowed says that t alone would name another FROM item where the
// reference stands (an inner public.orders, an alias orders), so the
// stripped reference would read that item instead.
type qualifiedRef struct {
	cr       *pg.ColumnRef
	strip    int
	shadowed bool
}

// visibleAlias is the alias a replacement of the reference must carry: the
// user's, or the relation's own name.
func (ref *relRef) visibleAlias() *pg.Alias {
	if ref.rv.Alias != nil {
		return ref.rv.Alias
	}
	return &pg.Alias{Aliasname: ref.rel.Name}
}

func (ref *relRef) markVisible(name string) bool {
	found := false
	for i, c := range ref.visibleCols {
		if c == name {
			if ref.read != nil {
				ref.read[i] = true
			}
			ref.collect(i)
			ref.hit(i)
			found = true
		}
	}
	return found
}

// hit reports a mark to the barrier's collector, if one is listening.
func (ref *relRef) hit(col int) {
	if ref.st != nil && ref.st.bar != nil && ref.st.bar.hits != nil {
		*ref.st.bar.hits = append(*ref.st.bar.hits, colHit{ref, col})
	}
}

func (ref *relRef) markAllColumns() {
	ref.collect(-1)
	ref.hit(-1)
	if ref.read == nil {
		return
	}
	for i := range ref.visibleCols {
		ref.read[i] = true
	}
}

// collect records the column reference being resolved (see nodes).
func (ref *relRef) collect(col int) {
	if ref.cur != nil && *ref.cur != nil {
		ref.nodes = append(ref.nodes, colNode{node: *ref.cur, col: col})
	}
}

// uses are the audit records of a reference: what it reads, and for a
// DML target what it writes.
func (ref *relRef) uses() []ResourceUse {
	if ref.dml == nil {
		return []ResourceUse{ref.use()}
	}
	var out []ResourceUse
	if len(ref.read) > 0 {
		out = append(out, ref.use())
	}
	u := ResourceUse{Access: ref.dml.access}
	if u.Access == "" {
		u.Access = "update"
	}
	if ref.pol != nil {
		u.Database, u.Table = ref.pol.resource.Database, ref.pol.resource.Table
		if ref.pol.super {
			u.PolicyIDs = []int64{-1}
		} else {
			u.PolicyIDs = appendID(u.PolicyIDs, ref.dml.table.PolicyID)
		}
		for _, i := range ref.dml.writtenColumns() {
			u.Columns = append(u.Columns, ref.rel.Columns[i].Name)
			if d, ok := ref.dml.columns[i]; ok {
				u.PolicyIDs = appendID(u.PolicyIDs, d.PolicyID)
			}
		}
		for _, id := range ref.pol.filter.PolicyIDs {
			u.FilterPolicyIDs = appendID(u.FilterPolicyIDs, id)
		}
	}
	return append(out, u)
}

func (ref *relRef) use() ResourceUse {
	u := ResourceUse{Access: "select"}
	if ref.pol == nil {
		return u
	}
	u.Database, u.Table = ref.pol.resource.Database, ref.pol.resource.Table
	for _, i := range ref.readColumns() {
		u.Columns = append(u.Columns, ref.rel.Columns[i].Name)
		if ref.pol.super {
			u.PolicyIDs = []int64{-1}
			continue
		}
		u.PolicyIDs = appendID(u.PolicyIDs, ref.pol.colAccess[i].PolicyID)
	}
	for _, m := range ref.pol.masks {
		if m.Type != "" {
			u.MaskPolicyIDs = appendID(u.MaskPolicyIDs, m.PolicyID)
		}
	}
	for _, id := range ref.pol.filter.PolicyIDs {
		u.FilterPolicyIDs = appendID(u.FilterPolicyIDs, id)
	}
	return u
}

func (ref *relRef) readColumns() []int {
	out := make([]int, 0, len(ref.read))
	for i := range ref.read {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

func appendID(ids []int64, id int64) []int64 {
	if id == 0 {
		return ids
	}
	for _, x := range ids {
		if x == id {
			return ids
		}
	}
	return append(ids, id)
}

// relationPolicy evaluates Ranger for a governed relation. It returns nil
// (after recording an error) when the relation cannot be governed safely.
func (r *stmtRewriter) relationPolicy(rel *catalog.Relation) *relPolicy {
	if p, ok := r.rels[rel.OID]; ok {
		return p
	}
	user := r.sess.Subject.User
	switch {
	case r.env.Policy.Unavailable != "":
		r.fail(denyf("policies are unavailable (%s): access to %s.%s denied for user %q", r.env.Policy.Unavailable, rel.Schema, rel.Name, user))
		return nil
	case r.env.Policy.Engine == nil:
		r.fail(denyf("no policies are loaded: access to %s.%s denied for user %q", rel.Schema, rel.Name, user))
		return nil
	case rel.MultipleRoots:
		r.fail(denyf("%s.%s inherits from several parents, so no single policy governs it: access denied for user %q", rel.Schema, rel.Name, user))
		return nil
	}
	r.governed = true
	eng := r.env.Policy.Engine
	subj := r.sess.Subject
	res := policy.Resource{Database: r.rangerDatabase(rel.RootSchema), Table: rel.RootName, Owner: rel.Owner}
	if root, ok := r.snap.Lookup(rel.RootSchema, rel.RootName); ok {
		res.Owner = root.Owner
	}
	p := &relPolicy{rel: rel, resource: res}
	r.rels[rel.OID] = p
	if eng.IsSuperUser(subj) {
		p.super = true
		return p
	}
	p.colAccess = make([]policy.Decision, len(rel.Columns))
	p.masks = make([]policy.Mask, len(rel.Columns))
	rctx := r.requestContext()
	for i, c := range rel.Columns {
		cr := res
		cr.Column = c.Name
		p.colAccess[i] = r.access(cr, "select", rctx)
		if !p.colAccess[i].Allowed {
			p.wrap = true // restricted: the wrapper shows a typed NULL
		}
		// The mask is needed even for a column the user may not select:
		// read through a view (which grants access), it still applies.
		p.masks[i] = eng.Evaluate(&policy.Request{Subject: subj, Hive: cr, At: r.env.Now, Context: rctx, Want: policy.WantMask}).Mask
		if p.masks[i].Type != "" {
			p.wrap, p.wrapTrusted = true, true
		}
	}
	if rel.StoredMaskColumns != nil {
		r.capStoredMasks(p)
	}
	p.filter = eng.Evaluate(&policy.Request{Subject: subj, Hive: res, At: r.env.Now, Context: rctx, Want: policy.WantRowFilter}).RowFilter
	if len(p.filter.Exprs) > 0 {
		p.wrap, p.wrapTrusted = true, true
	}
	return p
}

func (r *stmtRewriter) rangerDatabase(schema string) string {
	if r.rw.opts.NamespaceMapping == "database.schema" {
		return r.sess.Database + "." + schema
	}
	return schema
}

// finish runs once the whole statement was walked: every governed
// reference is access-checked for the columns it may read and, where a
// policy applies, replaced by its wrapper.
func (r *stmtRewriter) finish() {
	if r.err == nil {
		r.decideBarriers()
	}
	var sctx *policy.RequestContext
	if r.err == nil {
		sctx = r.statementContext()
	}
	for _, ref := range r.refs {
		if r.err != nil {
			return
		}
		if ref.dml != nil {
			r.finishTarget(ref)
			continue
		}
		p := ref.pol
		if p.super {
			continue
		}
		if !ref.trusted {
			if err := r.checkAccess(ref, sctx); err != nil {
				r.fail(err)
				return
			}
		}
		switch {
		case p.wrap && !ref.trusted, p.wrapTrusted:
			r.wrap(ref)
		case ref.expanded != nil:
			ref.node.Node = &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
				Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: ref.expanded}},
				Alias:    ref.visibleAlias(),
			}}
			r.changed = true
		}
	}
	if r.err == nil {
		r.pruneMoved()
	}
}

func (r *stmtRewriter) checkAccess(ref *relRef, sctx *policy.RequestContext) *Error {
	p := ref.pol
	user := r.sess.Subject.User
	cols := ref.readColumns()
	if len(cols) == 0 {
		// A reference that reads no column (count(*), EXISTS (SELECT 1 …))
		// is a table-level request, as Hive makes it.
		d := r.access(p.resource, "select", sctx)
		if !d.Allowed {
			return accessDenied(denial(p.resource, "select", d),
				"permission denied: user %q has no select access to table %s.%s", user, ref.rel.Schema, ref.rel.Name)
		}
		return nil
	}
	for _, i := range cols {
		if sctx != nil && sctx.RequestedResources != nil {
			// Conditions read the statement's resources: decide again
			// with all of them (the precomputed decision did not know
			// them). A column a condition now denies denies the statement.
			cr := p.resource
			cr.Column = ref.rel.Columns[i].Name
			p.colAccess[i] = r.access(cr, "select", sctx)
		}
		if d := p.colAccess[i]; !d.Allowed {
			cr := p.resource
			cr.Column = ref.rel.Columns[i].Name
			return accessDenied(denial(cr, "select", d),
				"permission denied: user %q has no select access to column %s.%s.%s", user, ref.rel.Schema, ref.rel.Name, cr.Column)
		}
	}
	return nil
}
