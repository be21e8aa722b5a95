package authoring

import (
	"context"
	"fmt"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

// GRANT and REVOKE, mapped as HiveServer2 maps them
// (RangerHiveAuthorizer.createGrantRevokeData) and sent to Ranger's grant
// and revoke (or applied to the policy file with the same semantics):
//
//	SELECT                               select
//	INSERT, UPDATE, DELETE, TRUNCATE     update
//	ALL [PRIVILEGES]                     all
//	REFERENCES, TRIGGER, MAINTAIN, …     refused (0A000): Ranger has no such access
//	ON s.t, ON s.t (cols)                database=s, table=t, column=* or cols
//	ON ALL TABLES IN SCHEMA s            database=s, table=*, column=*
//	ON another kind of object            refused (0A000)
//	WITH GRANT OPTION                    delegateAdmin
//	REVOKE GRANT OPTION FOR              refused: Ranger cannot take delegated admin alone
//	REVOKE … CASCADE, GRANTED BY         refused: Ranger has no grant chains, and the
//	                                     grantor is always the session's user
//
// The grantor is the session's user with its groups. Ranger changes only
// the first enabled access policy whose resources are exactly the
// request's (a broader policy keeps granting after a REVOKE: a NOTICE
// says so).

// privilegeAccess maps PostgreSQL's privileges to Ranger's access types.
var privilegeAccess = map[string]string{
	"select": "select", "insert": "update", "update": "update", "delete": "update", "truncate": "update",
}

type grantTarget struct {
	pgName    string // as messages name it: sales.orders, sales.* (all tables)
	db, table string // the Ranger resource
	columns   []string
	accesses  []string
}

func (t grantTarget) column() string {
	if len(t.columns) == 0 {
		return "*"
	}
	return strings.Join(t.columns, ",")
}

type grantPlan struct {
	grant    bool
	verb     string // grant, revoke
	targets  []grantTarget
	grantees []Principal
	delegate bool
}

func (st *stmtContext) grant(g *pg.GrantStmt) (plan, *sqlrewrite.Error) {
	p := &grantPlan{grant: g.IsGrant, verb: "grant", delegate: g.GrantOption}
	stmt := "GRANT"
	if !g.IsGrant {
		p.verb, stmt = "revoke", "REVOKE"
	}
	if g.Grantor != nil {
		return nil, unsupported("%s … GRANTED BY is not supported: the grantor Ranger records is always the session's user", stmt)
	}
	if !g.IsGrant && g.GrantOption {
		return nil, unsupported("REVOKE GRANT OPTION FOR is not supported: Ranger's delegated admin belongs to a policy item, and cannot be taken back without the privilege; REVOKE the privilege")
	}
	if !g.IsGrant && g.Behavior == pg.DropBehavior_DROP_CASCADE {
		return nil, unsupported("REVOKE … CASCADE is not supported: Ranger has no chains of grants to follow")
	}
	if g.Objtype != pg.ObjectType_OBJECT_TABLE {
		return nil, unsupported("%s on a %s is not supported: pgranger writes Ranger's hive resources, tables and their columns (database=<schema>, table=<table>)",
			stmt, strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(g.Objtype.String(), "OBJECT_"), "_", " ")))
	}
	// Privileges grouped by column list: one grant request per list.
	type privGroup struct {
		cols     []string
		accesses []string
	}
	var groups []*privGroup
	byCols := map[string]*privGroup{}
	addPriv := func(cols []string, access string) {
		key := strings.Join(cols, ",")
		gr := byCols[key]
		if gr == nil {
			gr = &privGroup{cols: cols}
			byCols[key] = gr
			groups = append(groups, gr)
		}
		for _, a := range gr.accesses {
			if a == access {
				return
			}
		}
		gr.accesses = append(gr.accesses, access)
	}
	if len(g.Privileges) == 0 {
		addPriv(nil, "all")
	}
	for _, n := range g.Privileges {
		ap := n.GetAccessPriv()
		if ap == nil {
			return nil, unsupported("this privilege is not supported")
		}
		var cols []string
		for _, c := range ap.Cols {
			cols = append(cols, c.GetString_().GetSval())
		}
		sort.Strings(cols)
		if ap.PrivName == "" { // ALL (a, b)
			addPriv(cols, "all")
			continue
		}
		access, ok := privilegeAccess[ap.PrivName]
		if !ok {
			return nil, unsupported("privilege %s has no Ranger access type: pgranger maps SELECT to select, INSERT, UPDATE, DELETE and TRUNCATE to update, ALL to all",
				strings.ToUpper(ap.PrivName))
		}
		addPriv(cols, access)
	}
	switch g.Targtype {
	case pg.GrantTargetType_ACL_TARGET_OBJECT:
		for _, o := range g.Objects {
			rv := o.GetRangeVar()
			if rv == nil {
				return nil, unsupported("%s on this object is not supported", stmt)
			}
			if rv.Catalogname != "" && rv.Catalogname != st.req.Database {
				return nil, unsupported("cross-database references are not implemented: %s.%s.%s", rv.Catalogname, rv.Schemaname, rv.Relname)
			}
			rel, schema, name, err := st.relation(rv.Schemaname, rv.Relname)
			if err != nil {
				return nil, err
			}
			cols := columnsOf(rel)
			for _, gr := range groups {
				for _, c := range gr.cols {
					if cols != nil && !cols[c] {
						return nil, errorf(sqlstate.UndefinedColumn, "column %q of relation %q does not exist", c, name)
					}
				}
				p.targets = append(p.targets, grantTarget{pgName: schema + "." + name, db: st.rangerDatabase(schema), table: name,
					columns: gr.cols, accesses: gr.accesses})
			}
		}
	case pg.GrantTargetType_ACL_TARGET_ALL_IN_SCHEMA:
		for _, o := range g.Objects {
			schema := o.GetString_().GetSval()
			for _, gr := range groups {
				if len(gr.cols) > 0 {
					return nil, unsupported("column privileges on ALL TABLES IN SCHEMA are not supported")
				}
				p.targets = append(p.targets, grantTarget{pgName: schema + ".*", db: st.rangerDatabase(schema), table: "*", accesses: gr.accesses})
			}
		}
	default:
		return nil, unsupported("%s of default privileges is not supported", stmt)
	}
	return &grantee{plan: p, specs: g.Grantees}, nil
}

// grantee resolves the grantees once the directory is known (authorize
// runs with the bundle in force).
type grantee struct {
	plan  *grantPlan
	specs []*pg.Node
}

func (g *grantee) audit(r *Result) {
	if len(g.plan.targets) == 0 {
		return
	}
	t := g.plan.targets[0]
	r.Resource, r.ResType = t.db+"/"+t.table+"/"+t.column(), "@column"
	if len(t.columns) == 0 {
		r.Resource, r.ResType = t.db+"/"+t.table, "@table"
	}
	var acc []string
	for _, t := range g.plan.targets {
		acc = append(acc, t.accesses...)
	}
	r.Access = strings.Join(acc, ",")
}

func (g *grantee) lockKeys() []string {
	var keys []string
	for _, t := range g.plan.targets {
		keys = append(keys, "access:"+t.db+"/"+t.table+"/"+t.column())
	}
	return keys
}

func (g *grantee) authorize(x *exec) *sqlrewrite.Error {
	p := g.plan
	var err *sqlrewrite.Error
	if p.grantees, err = x.dir.roleSpecs(g.specs, x.user()); err != nil {
		return err
	}
	for _, t := range p.targets {
		cols := t.columns
		if len(cols) == 0 {
			cols = []string{"*"}
		}
		// A request on several columns needs delegated admin on each.
		for _, c := range cols {
			res := policy.Resource{Database: t.db, Table: t.table, Column: c}
			if d := x.eng.Evaluate(&policy.Request{Subject: x.req.Subject, Hive: res, Accesses: t.accesses, At: x.now, Want: policy.WantAdmin}).Admin; !d.Allowed {
				name := t.pgName
				if c != "*" {
					name += "." + c
				}
				return adminDenied(x, p.verb, res, name, d)
			}
		}
	}
	return nil
}

func (g *grantee) request(x *exec, t grantTarget) *ranger.GrantRevokeRequest {
	users, groups, roles := split(g.plan.grantees)
	return &ranger.GrantRevokeRequest{
		Grantor:         x.user(),
		GrantorGroups:   x.req.Subject.Groups,
		Resource:        map[string]string{"database": t.db, "table": t.table, "column": t.column()},
		Users:           users,
		Groups:          groups,
		Roles:           roles,
		AccessTypes:     t.accesses,
		DelegateAdmin:   g.plan.delegate,
		EnableAudit:     true,
		ClientIPAddress: x.req.ClientAddr,
		ClientType:      "pgranger",
	}
}

func (g *grantee) run(ctx context.Context, x *exec) *sqlrewrite.Error {
	p := g.plan
	store := x.svc.cfg.Store
	type sent struct {
		t     grantTarget
		req   *ranger.GrantRevokeRequest
		exact bool // a policy had exactly the request's resources before
	}
	var done []sent
	for _, t := range p.targets {
		req := g.request(x, t)
		what := fmt.Sprintf("%s %s on %s", strings.ToUpper(p.verb), strings.Join(t.accesses, ","), t.pgName)
		exact := true
		if !p.grant {
			before, err := store.Policies(ctx)
			if err != nil {
				return storeError(err, x.user(), what)
			}
			exact = before.ExactMatch(req) != nil
		}
		var err error
		if p.grant {
			err = store.Grant(ctx, req)
		} else {
			err = store.Revoke(ctx, req)
		}
		if err != nil {
			return storeError(err, x.user(), what)
		}
		done = append(done, sent{t, req, exact})
	}
	x.reload(ctx)
	after, err := store.Policies(ctx)
	if err != nil {
		return storeError(err, x.user(), "reading back the "+strings.ToUpper(p.verb))
	}
	for _, s := range done {
		if msg := verifyGrant(after, s.req, p.grant); msg != "" && s.exact {
			return withDetail(errorf(sqlstate.SerializationFailure, "could not serialize access due to concurrent update: %s", msg),
				"Ranger has no optimistic concurrency: another writer replaced the policy after pgranger's write.", "Run the statement again.")
		}
		if !p.grant {
			x.revokeNotices(s.t, s.req, s.exact)
		}
	}
	return nil
}

// verifyGrant checks the policy with exactly the request's resources now:
// after a grant each grantee holds every access, after a revoke none.
func verifyGrant(sp *ranger.ServicePolicies, req *ranger.GrantRevokeRequest, grant bool) string {
	p := sp.ExactMatch(req)
	if p == nil {
		if grant {
			return fmt.Sprintf("no policy has the resources %v after the grant", req.Resource)
		}
		return ""
	}
	holds := func(kind, name, access string) bool {
		for _, it := range p.PolicyItems {
			list := it.Users
			switch kind {
			case KindGroup:
				list = it.Groups
			case KindRole:
				list = it.Roles
			}
			named := false
			for _, n := range list {
				named = named || n == name
			}
			if !named {
				continue
			}
			for _, a := range it.Accesses {
				if a.IsAllowed && strings.EqualFold(a.Type, access) {
					return true
				}
			}
		}
		return false
	}
	for kind, names := range map[string][]string{KindUser: req.Users, KindGroup: req.Groups, KindRole: req.Roles} {
		for _, n := range names {
			for _, a := range req.AccessTypes {
				if h := holds(kind, n, a); h != grant {
					if grant {
						return fmt.Sprintf("policy %d %q does not give %s %s %s after the grant", p.ID, p.Name, kind, n, a)
					}
					return fmt.Sprintf("policy %d %q still gives %s %s %s after the revoke", p.ID, p.Name, kind, n, a)
				}
			}
		}
	}
	return ""
}

// revokeNotices says when a REVOKE leaves access in place: no policy had
// exactly its resources (Ranger changed nothing), or another policy still
// grants what was revoked.
func (x *exec) revokeNotices(t grantTarget, req *ranger.GrantRevokeRequest, exact bool) {
	if !exact {
		x.notice("REVOKE changed nothing on %s: no policy has exactly the resources database=%s, table=%s, column=%s, and Ranger revokes only there",
			t.pgName, t.db, t.table, t.column())
	}
	cols := t.columns
	if len(cols) == 0 {
		cols = []string{"*"}
	}
	for _, gp := range x.planGrantees(req) {
		subj := gp.subject(x)
		for _, a := range t.accesses {
			for _, c := range cols {
				res := policy.Resource{Database: t.db, Table: t.table, Column: c}
				if d := x.eng.Evaluate(&policy.Request{Subject: subj, Hive: res, Access: a, At: x.now, Want: policy.WantAccess}).Access; d.Allowed && d.PolicyID > 0 {
					x.notice("%s still has %s on %s through policy %d %q", gp, a, t.pgName, d.PolicyID, policyName(x.bundle, d.PolicyID))
				}
			}
		}
	}
}

func (x *exec) planGrantees(req *ranger.GrantRevokeRequest) []Principal {
	var out []Principal
	for _, u := range req.Users {
		out = append(out, Principal{KindUser, u})
	}
	for _, g := range req.Groups {
		out = append(out, Principal{KindGroup, g})
	}
	for _, r := range req.Roles {
		out = append(out, Principal{KindRole, r})
	}
	return out
}

// subject is who a principal is for an access check: a user with the
// groups the directory knows, a member of a group, a holder of a role.
func (p Principal) subject(x *exec) *policy.Subject {
	switch p.Kind {
	case KindUser:
		return &policy.Subject{User: p.Name, Groups: x.dir.GroupsOf(p.Name)}
	case KindGroup:
		return &policy.Subject{Groups: []string{p.Name}}
	}
	return &policy.Subject{Roles: []string{p.Name}}
}

func policyName(b *ranger.Bundle, id int64) string {
	if b == nil || b.Policies == nil {
		return ""
	}
	for _, p := range b.Policies.Policies {
		if p.ID == id {
			return p.Name
		}
	}
	return ""
}
