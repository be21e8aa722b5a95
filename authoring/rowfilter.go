package authoring

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

// CREATE / ALTER / DROP POLICY: a PostgreSQL row-level-security policy is
// one item of the table's row-filter policy. Ranger allows one enabled
// row-filter policy per table (per resource signature, error 3010), so
// every PostgreSQL policy of a table — and every item someone wrote in
// Ranger — lives in that one policy, whoever created it; pgranger creates
// it ("<schema>.<table> row filter") only when the table has none.
//
// Ranger evaluates the items in order and the first one that matches the
// user decides; PostgreSQL ORs permissive policies. The mapping keeps
// Ranger's meaning and says so (docs/authoring.md): items keep their
// order, a new one goes last.
//
// The PostgreSQL policy name is kept in the item's filter expression, as a
// conjunct every engine evaluates to true:
//
//	(<USING expression>) AND 'pgranger-policy:<name>' IS NOT NULL
//
// It survives Ranger's round trip and editing the item's users, groups
// and roles in Ranger's UI; an item without it (written in Ranger) is
// nobody's PostgreSQL policy, and ALTER and DROP never touch it.
//
//	AS PERMISSIVE (the default)      accepted
//	AS RESTRICTIVE                   refused (0A000): Ranger combines no filters
//	FOR ALL (the default), FOR SELECT accepted: Ranger filters reads (select)
//	FOR INSERT / UPDATE / DELETE     refused (0A000)
//	WITH CHECK                       refused (0A000)
//	TO grantees                      the item's users, groups, roles (default public)
//	USING (expr)                     the portable subset (expr.go), required

var markerRE = regexp.MustCompile(`(?s)^\((.*)\) AND 'pgranger-policy:([^']*)' IS NOT NULL$`)

// markFilter stores a PostgreSQL policy's name with its expression.
func markFilter(expr, name string) string {
	return "(" + expr + ") AND 'pgranger-policy:" + name + "' IS NOT NULL"
}

// parseMarked returns the expression and name of an item pgranger wrote;
// ok is false for an item written otherwise.
func parseMarked(filter string) (expr, name string, ok bool) {
	m := markerRE.FindStringSubmatch(filter)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

type rowFilterOp int

const (
	opCreate rowFilterOp = iota
	opAlter
	opRename
	opDrop
)

type rowFilterPlan struct {
	op        rowFilterOp
	pgTable   string // schema.table
	table     string // for PostgreSQL's messages: the table's name
	db, tbl   string // Ranger resource
	name      string // the PostgreSQL policy
	newName   string
	specs     []*pg.Node // grantees as written (nil: unchanged / PUBLIC)
	expr      string     // portable text ("" = unchanged)
	missingOK bool

	principals []Principal // resolved by authorize
}

// validPolicyName: the name is kept inside a string literal of the filter
// expression, which every engine must read the same way.
func validPolicyName(name string) *sqlrewrite.Error {
	if strings.ContainsAny(name, `'\`) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return unsupported("the policy name %q cannot be stored in Ranger: it may not hold a quote, a backslash or a control character", name)
	}
	return nil
}

func (st *stmtContext) policyTable(rv *pg.RangeVar) (*rowFilterPlan, map[string]bool, *sqlrewrite.Error) {
	if rv == nil {
		return nil, nil, unsupported("a policy needs a table")
	}
	rel, schema, name, err := st.relation(rv.Schemaname, rv.Relname)
	if err != nil {
		return nil, nil, err
	}
	return &rowFilterPlan{pgTable: schema + "." + name, table: name, db: st.rangerDatabase(schema), tbl: name}, columnsOf(rel), nil
}

func (st *stmtContext) usingExpr(qual *pg.Node, cols map[string]bool, table string) (string, *sqlrewrite.Error) {
	return portable(qual, st.sql, "", cols, table)
}

func (st *stmtContext) createPolicy(c *pg.CreatePolicyStmt) (plan, *sqlrewrite.Error) {
	p, cols, err := st.policyTable(c.Table)
	if err != nil {
		return nil, err
	}
	p.op, p.name = opCreate, c.PolicyName
	if err := validPolicyName(c.PolicyName); err != nil {
		return nil, err
	}
	switch c.CmdName {
	case "", "all", "select":
	default:
		return nil, unsupported("FOR %s is not supported: a Ranger row filter applies to reading (select), which is all HiveServer2 and Spark filter", strings.ToUpper(c.CmdName))
	}
	if !c.Permissive {
		return nil, unsupported("AS RESTRICTIVE is not supported: Ranger combines no filters; of a table's row-filter items the first that matches the user decides")
	}
	if c.WithCheck != nil {
		return nil, unsupported("WITH CHECK is not supported: a Ranger row filter has no check expression (writes through pgranger follow policy.dml-row-filter)")
	}
	if c.Qual == nil {
		return nil, unsupported("a row filter needs USING (expression)")
	}
	if p.expr, err = st.usingExpr(c.Qual, cols, p.pgTable); err != nil {
		return nil, err
	}
	p.specs = c.Roles
	return p, nil
}

func (st *stmtContext) alterPolicy(a *pg.AlterPolicyStmt) (plan, *sqlrewrite.Error) {
	p, cols, err := st.policyTable(a.Table)
	if err != nil {
		return nil, err
	}
	p.op, p.name = opAlter, a.PolicyName
	if a.WithCheck != nil {
		return nil, unsupported("WITH CHECK is not supported: a Ranger row filter has no check expression")
	}
	if a.Qual != nil {
		if p.expr, err = st.usingExpr(a.Qual, cols, p.pgTable); err != nil {
			return nil, err
		}
	}
	p.specs = a.Roles
	return p, nil
}

func (st *stmtContext) renamePolicy(r *pg.RenameStmt) (plan, *sqlrewrite.Error) {
	p, _, err := st.policyTable(r.Relation)
	if err != nil {
		return nil, err
	}
	p.op, p.name, p.newName = opRename, r.Subname, r.Newname
	if err := validPolicyName(r.Newname); err != nil {
		return nil, err
	}
	return p, nil
}

func (st *stmtContext) dropPolicy(d *pg.DropStmt) (plan, *sqlrewrite.Error) {
	if len(d.Objects) != 1 {
		return nil, unsupported("DROP POLICY of several policies at once is not supported")
	}
	if d.Behavior == pg.DropBehavior_DROP_CASCADE {
		return nil, unsupported("DROP POLICY … CASCADE is not supported")
	}
	var parts []string
	for _, it := range d.Objects[0].GetList().GetItems() {
		parts = append(parts, it.GetString_().GetSval())
	}
	if len(parts) < 2 {
		return nil, unsupported("DROP POLICY needs ON table")
	}
	name := parts[len(parts)-1]
	rv := &pg.RangeVar{Relname: parts[len(parts)-2]}
	if len(parts) >= 3 {
		rv.Schemaname = parts[len(parts)-3]
	}
	p, _, err := st.policyTable(rv)
	if err != nil {
		return nil, err
	}
	p.op, p.name, p.missingOK = opDrop, name, d.MissingOk
	return p, nil
}

func (p *rowFilterPlan) audit(r *Result) {
	r.Resource, r.ResType, r.Access = p.db+"/"+p.tbl, "@table", "select"
}

func (p *rowFilterPlan) lockKeys() []string { return []string{"rowfilter:" + p.db + "/" + p.tbl} }

func (p *rowFilterPlan) authorize(x *exec) *sqlrewrite.Error {
	if p.op == opCreate || (p.op == opAlter && p.specs != nil) {
		specs := p.specs
		if len(specs) == 0 {
			specs = []*pg.Node{{Node: &pg.Node_RoleSpec{RoleSpec: &pg.RoleSpec{Roletype: pg.RoleSpecType_ROLESPEC_PUBLIC}}}}
		}
		var err *sqlrewrite.Error
		if p.principals, err = x.dir.roleSpecs(specs, x.user()); err != nil {
			return err
		}
	}
	res := policy.Resource{Database: p.db, Table: p.tbl}
	if d := x.eng.Evaluate(&policy.Request{Subject: x.req.Subject, Hive: res, Accesses: []string{"select"}, At: x.now, Want: policy.WantAdmin}).Admin; !d.Allowed {
		verb := map[rowFilterOp]string{opCreate: "create row filters for", opAlter: "alter row filters for", opRename: "alter row filters for", opDrop: "drop row filters for"}[p.op]
		e := adminDenied(x, verb, res, p.pgTable, d)
		e.Message = fmt.Sprintf("pgranger: permission denied: user %q may not %s table %s: it has no delegated admin for select there", x.user(), verb, p.pgTable)
		return e
	}
	return nil
}

// rowFilterPolicy is the table's row-filter policy: the enabled policy of
// type row filter with exactly the table's resources (Ranger's signature),
// whoever wrote it; nil when there is none.
func rowFilterPolicy(sp *ranger.ServicePolicies, db, table string) *ranger.RangerPolicy {
	probe := &ranger.RangerPolicy{IsEnabled: true, PolicyType: ranger.PolicyTypeRowFilter, Resources: map[string]ranger.RangerPolicyResource{
		"database": {Values: []string{db}}, "table": {Values: []string{table}}}}
	sig := ranger.ResourceSignature(probe)
	for i := range sp.Policies {
		q := &sp.Policies[i]
		if q.IsEnabled && q.PolicyType == ranger.PolicyTypeRowFilter && ranger.ResourceSignature(q) == sig {
			return q
		}
	}
	return nil
}

// findItem is the index of the item holding PostgreSQL policy name (-1).
func findItem(p *ranger.RangerPolicy, name string) int {
	if p == nil {
		return -1
	}
	for i, it := range p.RowFilterPolicyItems {
		if it.RowFilterInfo == nil {
			continue
		}
		if _, n, ok := parseMarked(it.RowFilterInfo.FilterExpr); ok && n == name {
			return i
		}
	}
	return -1
}

func (p *rowFilterPlan) item(expr string) ranger.RangerRowFilterPolicyItem {
	users, groups, roles := split(p.principals)
	return ranger.RangerRowFilterPolicyItem{
		RangerPolicyItem: ranger.RangerPolicyItem{Users: users, Groups: groups, Roles: roles,
			Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}},
		RowFilterInfo: &ranger.RangerPolicyItemRowFilterInfo{FilterExpr: markFilter(expr, p.name)},
	}
}

func (p *rowFilterPlan) notFound() *sqlrewrite.Error {
	return errorf(sqlstate.UndefinedObject, "policy %q for table %q does not exist", p.name, p.table)
}

func (p *rowFilterPlan) run(ctx context.Context, x *exec) *sqlrewrite.Error {
	store := x.svc.cfg.Store
	stmt := map[rowFilterOp]string{opCreate: "CREATE POLICY", opAlter: "ALTER POLICY", opRename: "ALTER POLICY", opDrop: "DROP POLICY"}[p.op]
	what := fmt.Sprintf("%s %s on %s", stmt, p.name, p.pgTable)
	sp, err := store.Policies(ctx)
	if err != nil {
		return storeError(err, x.user(), what)
	}
	target := rowFilterPolicy(sp, p.db, p.tbl)
	idx := findItem(target, p.name)
	var write func() error
	switch p.op {
	case opCreate:
		if idx >= 0 {
			return errorf(sqlstate.DuplicateObject, "policy %q for table %q already exists", p.name, p.table)
		}
		if target == nil {
			np := &ranger.RangerPolicy{
				Name:        p.pgTable + " row filter",
				Description: "Row filters written through pgranger: each item is one PostgreSQL policy (CREATE POLICY), named in its filter.",
				IsEnabled:   true, IsAuditEnabled: true, PolicyType: ranger.PolicyTypeRowFilter, CreatedBy: x.user(), UpdatedBy: x.user(),
				Resources:            map[string]ranger.RangerPolicyResource{"database": {Values: []string{p.db}}, "table": {Values: []string{p.tbl}}},
				RowFilterPolicyItems: []ranger.RangerRowFilterPolicyItem{p.item(p.expr)},
			}
			write = func() error { return store.Create(ctx, np) }
		} else {
			target.RowFilterPolicyItems = append(target.RowFilterPolicyItems, p.item(p.expr))
			write = p.update(ctx, store, target, x.user())
		}
	case opAlter, opRename:
		if idx < 0 {
			return p.notFound()
		}
		it := &target.RowFilterPolicyItems[idx]
		expr, _, _ := parseMarked(it.RowFilterInfo.FilterExpr)
		name := p.name
		if p.op == opRename {
			if p.newName != p.name && findItem(target, p.newName) >= 0 {
				return errorf(sqlstate.DuplicateObject, "policy %q for table %q already exists", p.newName, p.table)
			}
			name = p.newName
		}
		if p.expr != "" {
			expr = p.expr
		}
		if p.principals != nil {
			it.Users, it.Groups, it.Roles = split(p.principals)
		}
		it.RowFilterInfo = &ranger.RangerPolicyItemRowFilterInfo{FilterExpr: markFilter(expr, name)}
		write = p.update(ctx, store, target, x.user())
	case opDrop:
		if idx < 0 {
			if p.missingOK {
				x.notice("policy %q for table %q does not exist, skipping", p.name, p.table)
				return nil
			}
			return p.notFound()
		}
		target.RowFilterPolicyItems = append(target.RowFilterPolicyItems[:idx], target.RowFilterPolicyItems[idx+1:]...)
		if len(target.RowFilterPolicyItems) == 0 {
			// A row-filter policy without items filters nothing: it goes.
			name := target.Name
			write = func() error { return store.Delete(ctx, name) }
		} else {
			write = p.update(ctx, store, target, x.user())
		}
	}
	if err := write(); err != nil {
		return storeError(err, x.user(), what)
	}
	x.reload(ctx)
	return p.verify(ctx, x, what)
}

func (p *rowFilterPlan) update(ctx context.Context, store Store, target *ranger.RangerPolicy, user string) func() error {
	return func() error {
		up := *target
		up.UpdatedBy = user
		return store.Update(ctx, target.Name, &up)
	}
}

// verify reads the policies again: the change must be there.
func (p *rowFilterPlan) verify(ctx context.Context, x *exec, what string) *sqlrewrite.Error {
	sp, err := x.svc.cfg.Store.Policies(ctx)
	if err != nil {
		return storeError(err, x.user(), "reading back "+what)
	}
	target := rowFilterPolicy(sp, p.db, p.tbl)
	name := p.name
	if p.op == opRename {
		name = p.newName
	}
	idx := findItem(target, name)
	lost := ""
	switch {
	case p.op == opDrop && idx >= 0:
		lost = fmt.Sprintf("policy %q is still in the row-filter policy of %s", name, p.pgTable)
	case p.op != opDrop && idx < 0:
		lost = fmt.Sprintf("policy %q is not in the row-filter policy of %s after the write", name, p.pgTable)
	case p.op != opDrop && p.expr != "":
		if expr, _, _ := parseMarked(target.RowFilterPolicyItems[idx].RowFilterInfo.FilterExpr); expr != p.expr {
			lost = fmt.Sprintf("policy %q of %s has another expression after the write", name, p.pgTable)
		}
	}
	if lost != "" {
		return withDetail(errorf(sqlstate.SerializationFailure, "could not serialize access due to concurrent update: %s", lost),
			"Ranger has no optimistic concurrency: another writer replaced the policy after pgranger's write.", "Run the statement again.")
	}
	return nil
}
