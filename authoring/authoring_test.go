package authoring

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/filesource"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
	"github.com/pgranger/pgranger/ranger/rangertest"
)

// The policies every case starts from: alice has delegated admin on
// sales (select, update); analysts read sales; a row filter written in
// Ranger (policy 20) filters orders for analysts; root is a super user.
const basePolicies = `{"serviceName":"hive","policyVersion":10,
 "serviceConfig":{"ranger.plugin.super.users":"root"},
 "policies":[
  {"id":1,"name":"sales all","isEnabled":true,"resources":{"database":{"values":["sales"]},"table":{"values":["*"]},"column":{"values":["*"]}},
   "policyItems":[{"groups":["analysts"],"accesses":[{"type":"select","isAllowed":true}]},
                  {"users":["alice"],"accesses":[{"type":"select","isAllowed":true},{"type":"update","isAllowed":true}],"delegateAdmin":true}]},
  {"id":20,"name":"orders by region","isEnabled":true,"policyType":2,"resources":{"database":{"values":["sales"]},"table":{"values":["orders"]}},
   "rowFilterPolicyItems":[{"groups":["analysts"],"accesses":[{"type":"select","isAllowed":true}],"rowFilterInfo":{"filterExpr":"region = '${{USER.region}}'"}}]}
 ]}`

const baseUserStore = `{"userStoreVersion":3,"userGroupMapping":{"alice":["admins"],"bob":["analysts"],"carol":["support"],"root":["dba"],"ops":["ops"]}}`
const baseRoles = `{"serviceName":"hive","roleVersion":2,"rangerRoles":[{"name":"auditor","users":[{"name":"carol"}]}]}`
const baseTags = `{"serviceName":"hive","tagVersion":4}`

var salesCatalog = catalog.Static(1, []*catalog.Relation{
	{OID: 1, Schema: "sales", Name: "orders", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{{Name: "id"}, {Name: "ssn"}, {Name: "email"}, {Name: "region"}, {Name: "amount"}, {Name: "owner"}}},
	{OID: 2, Schema: "sales", Name: "customers", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{{Name: "id"}, {Name: "name"}}},
}, nil)

// env is one Service against one store and the policy source of the
// same place (ranger/filesource, ranger/rangeradmin), as the binary wires
// them: env is the source's sink, and a write is reloaded through the
// source.
type env struct {
	name    string
	svc     *Service
	store   Store
	src     ranger.Source
	ranger  *rangertest.Server // nil for the file store
	mu      sync.Mutex
	eng     *policy.Engine
	bundle  *ranger.Bundle
	reloads int
}

func (e *env) inForce() (*policy.Engine, *ranger.Bundle, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.eng, e.bundle, ""
}

// Install and Clear make env the source's sink.
func (e *env) Install(b *ranger.Bundle) error {
	eng, err := policy.NewEngine(b, policy.Options{})
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.eng, e.bundle = eng, b
	e.mu.Unlock()
	return nil
}

func (e *env) Clear(string) {
	e.mu.Lock()
	e.eng, e.bundle = nil, nil
	e.mu.Unlock()
}

func (e *env) reload(ctx context.Context) error {
	e.mu.Lock()
	e.reloads++
	e.mu.Unlock()
	return e.src.Reload(ctx)
}

func (e *env) writes() int {
	if e.ranger != nil {
		return e.ranger.Writes()
	}
	return 0
}

func (e *env) policies(t *testing.T) *ranger.ServicePolicies {
	t.Helper()
	sp, err := e.store.Policies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func newFileEnv(t *testing.T) *env {
	dir := t.TempDir()
	paths := ranger.FilePaths{Policies: filepath.Join(dir, "hive.json"), Tags: filepath.Join(dir, "tags.json"),
		Roles: filepath.Join(dir, "roles.json"), UserStore: filepath.Join(dir, "userstore.json")}
	for path, doc := range map[string]string{paths.Policies: basePolicies, paths.Tags: baseTags, paths.Roles: baseRoles, paths.UserStore: baseUserStore} {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := &env{name: "file", store: FileStore{Files: ranger.NewFileStore(paths)}}
	src, err := filesource.New(filesource.Config{Paths: paths, PollInterval: time.Hour, Sink: e})
	if err != nil {
		t.Fatal(err)
	}
	e.src = src
	return e.start(t)
}

const rangerPassword = "pgranger-pw"

func newRangerEnv(t *testing.T) *env {
	srv, err := rangertest.New("hive", "pgranger", rangerPassword)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	srv.AddAccount("pgranger", rangerPassword, true) // policy and tag rights
	srv.SetGrantRevokeUsers("pgranger")
	srv.SetDocument(rangeradmin.DocPolicies, []byte(basePolicies))
	srv.SetDocument(rangeradmin.DocUserStore, []byte(baseUserStore))
	srv.SetDocument(rangeradmin.DocRoles, []byte(baseRoles))
	srv.SetDocument(rangeradmin.DocTags, []byte(baseTags))
	client, err := rangeradmin.NewAdminClient(rangeradmin.AdminClientConfig{URLs: []string{srv.URL()}, User: "pgranger",
		Password: func() (string, error) { return rangerPassword, nil }, ServiceName: "hive", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{name: "ranger", store: RangerStore{Client: client}, ranger: srv}
	src, err := rangeradmin.NewAdminSource(rangeradmin.AdminSourceConfig{Client: client, Documents: rangeradmin.AllDocuments,
		PollInterval: time.Hour, Sink: e})
	if err != nil {
		t.Fatal(err)
	}
	e.src = src
	return e.start(t)
}

func (e *env) start(t *testing.T) *env {
	t.Helper()
	if err := e.src.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.svc = New(Config{Store: e.store, InForce: e.inForce, Reload: e.reload})
	return e
}

func (e *env) run(user string, sql string) *Result {
	groups := map[string][]string{"alice": {"admins"}, "bob": {"analysts"}, "carol": {"support"}, "root": {"dba"}}[user]
	return e.svc.Run(context.Background(), &Request{SQL: sql, Subject: &policy.Subject{User: user, Groups: groups}, Database: "demo",
		ClientAddr: "10.0.0.7", Relation: func(schema, name string) (*catalog.Relation, bool) {
			if schema == "" {
				return salesCatalog.Resolve(name, []string{"sales"}, user)
			}
			return salesCatalog.Lookup(schema, name)
		}})
}

// both runs a test against the file store and the fake Ranger Admin: the
// same statements must mean the same thing.
func both(t *testing.T, f func(t *testing.T, e *env)) {
	t.Run("file", func(t *testing.T) { f(t, newFileEnv(t)) })
	t.Run("ranger", func(t *testing.T) { f(t, newRangerEnv(t)) })
}

func wantOK(t *testing.T, r *Result) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("%s: %s (%s) detail=%q sent=%v", r.Tag, r.Err.Message, r.Err.Code, r.Err.Detail, r.Sent)
	}
}

func wantErr(t *testing.T, r *Result, code, msg string) {
	t.Helper()
	if r.Err == nil || r.Err.Code != code || r.Err.Message != msg {
		got := "<nil>"
		if r.Err != nil {
			got = r.Err.Code + " " + r.Err.Message
		}
		t.Fatalf("got %s\nwant %s %s", got, code, msg)
	}
}

func notices(r *Result) string {
	var out []string
	for _, n := range r.Notices {
		out = append(out, n.Severity+": "+n.Message)
	}
	return strings.Join(out, "\n")
}

func access(e *env, user string, groups []string, db, table, col, acc string) bool {
	eng, _, _ := e.inForce()
	return eng.Access(&policy.Subject{User: user, Groups: groups}, policy.Resource{Database: db, Table: table, Column: col}, acc, time.Now()).Allowed
}

func TestGrantAndRevoke(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		if access(e, "carol", []string{"support"}, "sales", "orders", "id", "select") {
			t.Fatal("carol reads orders before the grant")
		}
		r := e.run("alice", "GRANT SELECT ON sales.orders TO carol")
		wantOK(t, r)
		if r.Tag != "GRANT" || r.Resource != "sales/orders" || r.Access != "select" || len(r.Sent) != 1 {
			t.Errorf("result %+v", r)
		}
		// Read your writes: the policies in force have the grant.
		if !access(e, "carol", []string{"support"}, "sales", "orders", "id", "select") || e.reloads != 1 {
			t.Errorf("carol does not read orders after the grant (reloads %d)", e.reloads)
		}
		sp := e.policies(t)
		g := sp.Policies[len(sp.Policies)-1]
		if !strings.HasPrefix(g.Name, "grant-") || g.Description != "created by grant" || itemsOf(g.PolicyItems) != "users=carol groups= roles= accesses=select" {
			t.Errorf("policy written: %s %q %s", g.Name, g.Description, itemsOf(g.PolicyItems))
		}
		// A second grant merges into the same policy (exact match).
		wantOK(t, e.run("alice", "GRANT UPDATE, INSERT ON sales.orders TO carol WITH GRANT OPTION"))
		sp = e.policies(t)
		if n := len(sp.Policies); n != 3 || itemsOf(sp.Policies[2].PolicyItems) != "users=carol groups= roles= accesses=select,update admin" {
			t.Errorf("after the second grant: %d policies, %s", n, itemsOf(sp.Policies[2].PolicyItems))
		}
		// REVOKE with no policy of exactly these resources changes nothing
		// and says so; the broader policy still grants.
		r = e.run("alice", `REVOKE SELECT ON sales.customers FROM "group:analysts"`)
		wantOK(t, r)
		want := `NOTICE: REVOKE changed nothing on sales.customers: no policy has exactly the resources database=sales, table=customers, column=*, and Ranger revokes only there
NOTICE: group analysts still has select on sales.customers through policy 1 "sales all"`
		if got := notices(r); got != want {
			t.Errorf("notices:\n%s\nwant\n%s", got, want)
		}
		r = e.run("alice", "REVOKE SELECT, UPDATE ON sales.orders FROM carol")
		wantOK(t, r)
		if notices(r) != "" || access(e, "carol", []string{"support"}, "sales", "orders", "id", "select") {
			t.Errorf("after the revoke: notices %q", notices(r))
		}
		if got := itemsOf(e.policies(t).Policies[2].PolicyItems); got != "users=carol groups= roles= accesses= admin" {
			t.Errorf("after the revoke, carol keeps delegated admin (Ranger's revoke without GRANT OPTION): %s", got)
		}
	})
}

func itemsOf(items []ranger.RangerPolicyItem) string {
	var parts []string
	for _, it := range items {
		var acc []string
		for _, a := range it.Accesses {
			acc = append(acc, a.Type)
		}
		s := "users=" + strings.Join(it.Users, ",") + " groups=" + strings.Join(it.Groups, ",") + " roles=" + strings.Join(it.Roles, ",") + " accesses=" + strings.Join(acc, ",")
		if it.DelegateAdmin {
			s += " admin"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " | ")
}

// Refusals: nothing is sent, the SQLSTATE and message are the user's.
func TestGrantRefusals(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		for _, tc := range []struct {
			user, sql, code, msg string
		}{
			{"bob", "GRANT SELECT ON sales.orders TO carol", "42501",
				`pgranger: permission denied: user "bob" may not grant select on table sales.orders: it has no delegated admin for select there`},
			{"alice", "GRANT ALL ON sales.orders TO carol", "42501",
				`pgranger: permission denied: user "alice" may not grant all on table sales.orders: it has no delegated admin for all there`},
			{"alice", "GRANT REFERENCES ON sales.orders TO carol", "0A000",
				`pgranger: privilege REFERENCES has no Ranger access type: pgranger maps SELECT to select, INSERT, UPDATE, DELETE and TRUNCATE to update, ALL to all`},
			{"alice", "GRANT USAGE ON SCHEMA sales TO carol", "0A000",
				`pgranger: GRANT on a schema is not supported: pgranger writes Ranger's hive resources, tables and their columns (database=<schema>, table=<table>)`},
			{"alice", "REVOKE GRANT OPTION FOR SELECT ON sales.orders FROM carol", "0A000",
				`pgranger: REVOKE GRANT OPTION FOR is not supported: Ranger's delegated admin belongs to a policy item, and cannot be taken back without the privilege; REVOKE the privilege`},
			{"alice", "GRANT SELECT ON sales.orders TO mallory", "42704", `pgranger: grantee "mallory" is not a user, group or role Ranger knows`},
			{"alice", "GRANT SELECT ON sales.orders TO ops", "42P09", `pgranger: grantee "ops" is ambiguous: it is user ops and group ops`},
			{"alice", "GRANT SELECT ON sales.nope TO carol", "42P01", `pgranger: relation "sales.nope" does not exist`},
			{"alice", "GRANT SELECT (nope) ON sales.orders TO carol", "42703", `pgranger: column "nope" of relation "orders" does not exist`},
		} {
			t.Run(tc.sql, func(t *testing.T) {
				before := e.policies(t).PolicyVersion
				r := e.run(tc.user, tc.sql)
				wantErr(t, r, tc.code, tc.msg)
				if len(r.Sent) != 0 || e.writes() != 0 || e.policies(t).PolicyVersion != before {
					t.Errorf("a refusal sent %v (%d writes)", r.Sent, e.writes())
				}
			})
		}
		// The denial says which resource and access, for the audit record.
		r := e.run("bob", "GRANT SELECT ON sales.orders TO carol")
		if d := r.Err.Denied; d == nil || d.Database != "sales" || d.Table != "orders" || d.Column != "*" || d.Access != "select" ||
			r.Err.Detail != `Ranger resource database=sales, table=orders, column=*: no enabled access policy gives user "bob" an allow item with delegateAdmin for select; nothing was sent to Ranger` {
			t.Errorf("denial %+v detail %q", r.Err.Denied, r.Err.Detail)
		}
	})
}

// Ranger's own refusals come back with Ranger's message.
func TestRangerRefusalsPassThrough(t *testing.T) {
	e := newRangerEnv(t)
	// pgranger lets a forced "user:x" through; Ranger knows no mallory.
	r := e.run("alice", `GRANT SELECT ON sales.orders TO "user:mallory"`)
	wantErr(t, r, "42501", `pgranger: Ranger Admin refused GRANT select on sales.orders for user "alice": Grantee user mallory doesn't exist`)
	if r.Err.Detail != "Ranger Admin answered HTTP 403" || len(r.Sent) != 1 || !strings.HasPrefix(r.Sent[0], "POST /service/plugins/secure/services/grant/hive {") || !strings.HasSuffix(r.Sent[0], "→ 403") {
		t.Errorf("detail %q sent %v", r.Err.Detail, r.Sent)
	}
	// Ranger down: 58000, the statement was not written.
	e.ranger.FailAll(503, `{"statusCode":1,"msgDesc":"maintenance"}`)
	r = e.run("alice", "GRANT SELECT ON sales.orders TO carol")
	wantErr(t, r, "58000", `pgranger: Ranger Admin failed; GRANT select on sales.orders for user "alice" was not written`)
}

func TestCreatePolicyMergesIntoTheTablesRowFilter(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		wantOK(t, e.run("alice", `CREATE POLICY eu_rows ON sales.orders TO carol, "group:support" USING (region = 'EU' AND owner <> current_user)`))
		wantOK(t, e.run("alice", "CREATE POLICY everyone ON orders USING (amount < 100)"))
		p := rowFilterPolicy(e.policies(t), "sales", "orders")
		if p == nil || p.ID != 20 || p.Name != "orders by region" {
			t.Fatalf("the row filter written in Ranger is the one changed: %+v", p)
		}
		want := []string{
			`groups=analysts users= roles= filter=region = '${{USER.region}}'`,
			`groups=support users=carol roles= filter=(region = 'EU' AND owner <> '${{USER._name}}') AND 'pgranger-policy:eu_rows' IS NOT NULL`,
			`groups=public users= roles= filter=(amount < 100) AND 'pgranger-policy:everyone' IS NOT NULL`,
		}
		if got := filterItems(p); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("items:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// carol's filter is in force at once.
		eng, _, _ := e.inForce()
		rf := eng.RowFilter(&policy.Subject{User: "carol", Groups: []string{"support"}}, policy.Resource{Database: "sales", Table: "orders"}, time.Now())
		if len(rf.Exprs) != 1 || rf.Exprs[0] != `(region = 'EU' AND owner <> '${{USER._name}}') AND 'pgranger-policy:eu_rows' IS NOT NULL` {
			t.Errorf("carol's filter: %v", rf.Exprs)
		}
		wantErr(t, e.run("alice", "CREATE POLICY eu_rows ON sales.orders USING (true)"), "42710", `pgranger: policy "eu_rows" for table "orders" already exists`)
		wantOK(t, e.run("alice", "ALTER POLICY eu_rows ON sales.orders USING (region IN ('EU', 'UK'))"))
		wantOK(t, e.run("alice", "ALTER POLICY eu_rows ON sales.orders RENAME TO europe"))
		wantOK(t, e.run("alice", `ALTER POLICY europe ON sales.orders TO "role:auditor"`))
		p = rowFilterPolicy(e.policies(t), "sales", "orders")
		if got := filterItems(p)[1]; got != `groups= users= roles=auditor filter=(region IN ('EU', 'UK')) AND 'pgranger-policy:europe' IS NOT NULL` {
			t.Errorf("after ALTER: %s", got)
		}
		// DROP POLICY removes only its item; the item written in Ranger stays.
		wantOK(t, e.run("alice", "DROP POLICY europe ON sales.orders"))
		r := e.run("alice", "DROP POLICY IF EXISTS europe ON sales.orders")
		wantOK(t, r)
		if notices(r) != `NOTICE: policy "europe" for table "orders" does not exist, skipping` {
			t.Errorf("notice %q", notices(r))
		}
		wantErr(t, e.run("alice", "DROP POLICY europe ON sales.orders"), "42704", `pgranger: policy "europe" for table "orders" does not exist`)
		wantErr(t, e.run("alice", "ALTER POLICY europe ON sales.orders USING (true)"), "42704", `pgranger: policy "europe" for table "orders" does not exist`)
		p = rowFilterPolicy(e.policies(t), "sales", "orders")
		if got := filterItems(p); len(got) != 2 || got[0] != want[0] || got[1] != want[2] {
			t.Errorf("after DROP: %v", got)
		}
		// A table without a row filter gets one, named for it.
		wantOK(t, e.run("alice", "CREATE POLICY mine ON sales.customers FOR SELECT TO bob USING (name LIKE 'A%')"))
		if p := rowFilterPolicy(e.policies(t), "sales", "customers"); p == nil || p.Name != "sales.customers row filter" {
			t.Errorf("new row-filter policy %+v", p)
		}
		wantOK(t, e.run("alice", "DROP POLICY mine ON sales.customers"))
		if p := rowFilterPolicy(e.policies(t), "sales", "customers"); p != nil {
			t.Errorf("the emptied row-filter policy stays: %+v", p)
		}
	})
}

func filterItems(p *ranger.RangerPolicy) []string {
	var out []string
	for _, it := range p.RowFilterPolicyItems {
		out = append(out, fmt.Sprintf("groups=%s users=%s roles=%s filter=%s", strings.Join(it.Groups, ","), strings.Join(it.Users, ","),
			strings.Join(it.Roles, ","), it.RowFilterInfo.FilterExpr))
	}
	return out
}

func TestCreatePolicyRefusals(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		for _, tc := range []struct{ user, sql, code, msg string }{
			{"bob", "CREATE POLICY p ON sales.orders USING (true)", "42501",
				`pgranger: permission denied: user "bob" may not create row filters for table sales.orders: it has no delegated admin for select there`},
			{"alice", "CREATE POLICY p ON sales.orders AS RESTRICTIVE USING (true)", "0A000",
				"pgranger: AS RESTRICTIVE is not supported: Ranger combines no filters; of a table's row-filter items the first that matches the user decides"},
			{"alice", "CREATE POLICY p ON sales.orders FOR INSERT WITH CHECK (true)", "0A000",
				"pgranger: FOR INSERT is not supported: a Ranger row filter applies to reading (select), which is all HiveServer2 and Spark filter"},
			{"alice", "CREATE POLICY p ON sales.orders USING (true) WITH CHECK (true)", "0A000",
				"pgranger: WITH CHECK is not supported: a Ranger row filter has no check expression (writes through pgranger follow policy.dml-row-filter)"},
			{"alice", "CREATE POLICY p ON sales.orders USING (id::text = '1')", "0A000",
				"pgranger: the :: cast is not allowed in a policy expression: HiveServer2 and Spark read the same policy and do not have it; write CAST(x AS type)"},
			{"alice", "CREATE POLICY p ON sales.orders USING (region ILIKE 'e%')", "0A000",
				"pgranger: ILIKE is not allowed in a policy expression: HiveServer2 and Spark read the same policy and do not have it; write lower(x) LIKE 'pattern'"},
			{"alice", "CREATE POLICY p ON sales.orders USING (nope = 1)", "42703", `pgranger: column "nope" does not exist in sales.orders`},
		} {
			t.Run(tc.sql, func(t *testing.T) {
				r := e.run(tc.user, tc.sql)
				wantErr(t, r, tc.code, tc.msg)
				if len(r.Sent) != 0 || e.writes() != 0 {
					t.Errorf("a refusal sent %v", r.Sent)
				}
			})
		}
	})
}

// 20 sessions create policies on one table at once: none is lost.
func TestConcurrentCreatePolicy(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		var wg sync.WaitGroup
		errs := make([]*Result, 20)
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = e.run("alice", fmt.Sprintf("CREATE POLICY p%02d ON sales.orders TO bob USING (id <> %d)", i, i))
			}()
		}
		wg.Wait()
		for _, r := range errs {
			wantOK(t, r)
		}
		p := rowFilterPolicy(e.policies(t), "sales", "orders")
		names := map[string]bool{}
		for _, it := range p.RowFilterPolicyItems {
			if _, n, ok := parseMarked(it.RowFilterInfo.FilterExpr); ok {
				names[n] = true
			}
		}
		if len(names) != 20 || len(p.RowFilterPolicyItems) != 21 {
			t.Errorf("%d of 20 policies, %d items", len(names), len(p.RowFilterPolicyItems))
		}
	})
}

func TestMaskLabel(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		wantOK(t, e.run("alice", `SECURITY LABEL FOR pgranger ON COLUMN sales.orders.ssn IS 'MASK_NONE TO GROUP admins; mask_show_last_4 TO bob, ROLE auditor; MASK_NULL'`))
		p := maskPolicy(e.policies(t), "sales", "orders", "ssn")
		if p == nil || p.Name != "sales.orders.ssn mask" {
			t.Fatalf("mask policy %+v", p)
		}
		if got := strings.Join(summarizeMasks(p.DataMaskPolicyItems), " "); got != "|admins||MASK_NONE| bob||auditor|MASK_SHOW_LAST_4| |public||MASK_NULL|" {
			t.Errorf("items: %s", got)
		}
		eng, _, _ := e.inForce()
		col := policy.Resource{Database: "sales", Table: "orders", Column: "ssn"}
		// carol holds the role auditor (RangerRoles); dave nothing.
		for user, want := range map[string]string{"alice": "", "bob": "MASK_SHOW_LAST_4", "carol": "MASK_SHOW_LAST_4", "dave": "MASK_NULL"} {
			groups := map[string][]string{"alice": {"admins"}, "bob": {"analysts"}, "carol": {"support"}}[user]
			if m := eng.Mask(&policy.Subject{User: user, Groups: groups}, col, time.Now()); m.Type != want {
				t.Errorf("%s: mask %q, want %q", user, m.Type, want)
			}
		}
		// The label replaces the whole policy; CUSTOM keeps {col}.
		wantOK(t, e.run("alice", `SECURITY LABEL FOR pgranger ON COLUMN sales.orders.ssn IS 'CUSTOM(CASE WHEN length({col}) > 4 THEN upper({col}) ELSE NULL END) TO carol'`))
		p = maskPolicy(e.policies(t), "sales", "orders", "ssn")
		if got := strings.Join(summarizeMasks(p.DataMaskPolicyItems), " "); got != "carol|||CUSTOM|CASE WHEN length({col}) > 4 THEN upper({col}) ELSE NULL END" {
			t.Errorf("CUSTOM: %s", got)
		}
		var types []string
		for _, mt := range policy.StockHiveServiceDef().DataMaskDef.MaskTypes {
			types = append(types, mt.Name)
		}
		wantErr(t, e.run("alice", `SECURITY LABEL FOR pgranger ON COLUMN sales.orders.ssn IS 'MASK_SHOW_LAST_5'`), "0A000",
			"pgranger: mask type MASK_SHOW_LAST_5 is not one of the service's: "+strings.Join(types, ", ")+", MASK_NONE, MASK_NULL, CUSTOM(expr)")
		wantErr(t, e.run("alice", `SECURITY LABEL FOR pgranger ON COLUMN sales.orders.ssn IS 'MASK TO'`), "42601",
			`pgranger: mask label: expected a user, group or role after TO at the end (character 8 of the label)`)
		wantErr(t, e.run("bob", `SECURITY LABEL FOR pgranger ON COLUMN sales.orders.ssn IS NULL`), "42501",
			`pgranger: permission denied: user "bob" may not set the mask of column sales.orders.ssn: it has no delegated admin for select there`)
		wantOK(t, e.run("alice", `SECURITY LABEL FOR pgranger ON COLUMN sales.orders.ssn IS NULL`))
		if p := maskPolicy(e.policies(t), "sales", "orders", "ssn"); p != nil {
			t.Errorf("IS NULL left %+v", p)
		}
		wantOK(t, e.run("alice", `SECURITY LABEL FOR pgranger ON COLUMN sales.orders.ssn IS NULL`))
	})
}

func TestTagLabel(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		r := e.run("alice", `SECURITY LABEL FOR pgranger_tags ON COLUMN sales.orders.email IS 'PII'`)
		wantErr(t, r, "42501", `pgranger: permission denied: user "alice" may not write the tags of sales.orders.email: only a super user may write tags`)
		wantOK(t, e.run("root", `SECURITY LABEL FOR pgranger_tags ON COLUMN sales.orders.email IS 'PII, GDPR'`))
		wantOK(t, e.run("root", `SECURITY LABEL FOR pgranger_tags ON TABLE sales.orders IS 'FINANCE'`))
		eng, _, _ := e.inForce()
		var got []string
		for _, tag := range eng.TagsOf(&policy.Subject{User: "bob"}, policy.Resource{Database: "sales", Table: "orders", Column: "email"}, time.Now()) {
			got = append(got, tag.Type+"/"+tag.MatchType)
		}
		if strings.Join(got, ",") != "PII/SELF,GDPR/SELF,FINANCE/ANCESTOR" {
			t.Errorf("tags in force: %v", got)
		}
		wantOK(t, e.run("root", `SECURITY LABEL FOR pgranger_tags ON COLUMN sales.orders.email IS 'GDPR'`))
		st, _ := e.store.Tags(context.Background())
		col := map[string]ranger.RangerPolicyResource{"database": {Values: []string{"sales"}}, "table": {Values: []string{"orders"}}, "column": {Values: []string{"email"}}}
		if got := ranger.TagTypes(st.ResourceTags(col)); strings.Join(got, ",") != "GDPR" || st.TagVersion != 7 {
			t.Errorf("tags %v version %d", got, st.TagVersion)
		}
		wantOK(t, e.run("root", `SECURITY LABEL FOR pgranger_tags ON COLUMN sales.orders.email IS NULL`))
		st, _ = e.store.Tags(context.Background())
		if len(st.ResourceTags(col)) != 0 {
			t.Errorf("IS NULL left %v", st.ResourceTags(col))
		}
	})
}

func TestUnavailablePoliciesDeny(t *testing.T) {
	e := newFileEnv(t)
	e.svc.cfg.InForce = func() (*policy.Engine, *ranger.Bundle, string) { return nil, nil, "no policy bundle has been loaded" }
	wantErr(t, e.run("root", "GRANT SELECT ON sales.orders TO carol"), "42501",
		`pgranger: policies are unavailable (no policy bundle has been loaded): GRANT denied for user "root"`)
}

func TestAuditOfWhatWasSent(t *testing.T) {
	e := newFileEnv(t)
	r := e.run("alice", "GRANT SELECT ON sales.orders TO carol")
	wantOK(t, r)
	var req ranger.GrantRevokeRequest
	if len(r.Sent) != 1 || !strings.Contains(r.Sent[0], ": grant {") || !strings.HasSuffix(r.Sent[0], "→ policyVersion 11") {
		t.Fatalf("sent %v", r.Sent)
	}
	body := r.Sent[0][strings.Index(r.Sent[0], "{") : strings.LastIndex(r.Sent[0], "}")+1]
	if err := json.Unmarshal([]byte(body), &req); err != nil || req.Grantor != "alice" || req.ClientIPAddress != "10.0.0.7" || req.ClientType != "pgranger" {
		t.Errorf("request %+v %v", req, err)
	}
}

// lossyStore loses every policy write while answering it succeeded: what
// another writer replacing the policy right after looks like.
type lossyStore struct{ Store }

func (lossyStore) Create(context.Context, *ranger.RangerPolicy) error         { return nil }
func (lossyStore) Update(context.Context, string, *ranger.RangerPolicy) error { return nil }

// The error paths of a write, each with its SQLSTATE and message.
func TestWriteErrors(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		// A write that is gone when read back: 40001.
		lossy := New(Config{Store: lossyStore{e.store}, InForce: e.inForce, Reload: e.reload})
		r := lossy.Run(context.Background(), &Request{SQL: "CREATE POLICY p ON sales.orders USING (true)",
			Subject: &policy.Subject{User: "alice", Groups: []string{"admins"}}})
		wantErr(t, r, "40001", `pgranger: could not serialize access due to concurrent update: policy "p" is not in the row-filter policy of sales.orders after the write`)
		// The name pgranger gives a new row-filter policy is taken: Ranger's 3006, 42710.
		wantOK(t, e.run("alice", `SECURITY LABEL FOR pgranger ON COLUMN sales.customers.name IS 'MASK'`))
		sp := e.policies(t)
		taken := *maskPolicy(sp, "sales", "customers", "name")
		taken.Name = "sales.customers row filter"
		taken.Resources = map[string]ranger.RangerPolicyResource{"database": {Values: []string{"x"}}, "table": {Values: []string{"y"}}, "column": {Values: []string{"z"}}}
		if err := e.store.Update(context.Background(), "sales.customers.name mask", &taken); err != nil {
			t.Fatal(err)
		}
		r = e.run("alice", "CREATE POLICY p ON sales.customers USING (true)")
		if r.Err == nil || r.Err.Code != "42710" || !strings.HasPrefix(r.Err.Message, `pgranger: Ranger Admin refused CREATE POLICY p on sales.customers for user "alice": (0) Validation failure: error code[3006], reason[Another policy already exists for this name: policy-name=[sales.customers row filter]`) {
			t.Errorf("name taken: %v", r.Err)
		}
	})
	// Tags without a tag file: 58030.
	e := newFileEnv(t)
	files := ranger.NewFileStore(ranger.FilePaths{Policies: e.store.(FileStore).Files.Paths().Policies})
	noTags := New(Config{Store: FileStore{Files: files}, InForce: e.inForce, Reload: e.reload})
	r := noTags.Run(context.Background(), &Request{SQL: "SECURITY LABEL FOR pgranger_tags ON TABLE sales.orders IS 'PII'",
		Subject: &policy.Subject{User: "root", Groups: []string{"dba"}}})
	wantErr(t, r, "58030", `pgranger: SECURITY LABEL (tags) on sales.orders for user "root" was not written: policy.file.tags is not set: there is no tag file to write tags to`)
	// Ranger's other validation failures: 22023 with its message.
	re := newRangerEnv(t)
	r = re.run("alice", `CREATE POLICY p ON sales.orders TO "user:mallory" USING (true)`)
	wantErr(t, r, "22023", `pgranger: Ranger Admin refused CREATE POLICY p on sales.orders for user "alice": Operation denied. User name: mallory specified in policy does not exist in ranger admin.`)
}
