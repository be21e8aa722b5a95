package sqlrewrite

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// conditionEngine is the demo bundle with the stock hive service-def plus
// conditions, and policies using them: sales.orders.ssn may not be read
// together with hr.employees.name; sales.regions only from 10.0.0.1.
func conditionEngine(t *testing.T) *policy.Engine {
	t.Helper()
	data, err := os.ReadFile("../examples/policies/hive.json")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ranger.ParseServicePolicies(data)
	if err != nil {
		t.Fatal(err)
	}
	sd := policy.StockHiveServiceDef()
	const pkg = "org.apache.ranger.plugin.conditionevaluator."
	sd.PolicyConditions = []ranger.RangerPolicyConditionDef{
		{ItemID: 1, Name: "accessed-together", Evaluator: pkg + "RangerHiveResourcesAccessedTogetherCondition"},
		{ItemID: 2, Name: "expression", Evaluator: pkg + "RangerScriptConditionEvaluator"},
	}
	sp.ServiceDef = sd
	sel := []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}
	res := func(db, tbl string, cols ...string) map[string]ranger.RangerPolicyResource {
		return map[string]ranger.RangerPolicyResource{"database": {Values: []string{db}}, "table": {Values: strings.Split(tbl, ",")}, "column": {Values: cols}}
	}
	sp.Policies = append(sp.Policies,
		ranger.RangerPolicy{ID: 990, Name: "ssn not with names", IsEnabled: true, Service: sp.ServiceName,
			Resources: map[string]ranger.RangerPolicyResource{"database": {Values: []string{"sales", "hr"}}, "table": {Values: []string{"orders", "employees"}}, "column": {Values: []string{"ssn", "name"}}},
			DenyPolicyItems: []ranger.RangerPolicyItem{{Accesses: sel, Groups: []string{"public"},
				Conditions: []ranger.RangerPolicyItemCondition{{Type: "accessed-together", Values: []string{"sales.orders.ssn", "hr.employees.name"}}}}}},
		ranger.RangerPolicy{ID: 991, Name: "regions from one client", IsEnabled: true, Service: sp.ServiceName,
			Resources: res("sales", "regions", "*"),
			DenyPolicyItems: []ranger.RangerPolicyItem{{Accesses: sel, Groups: []string{"public"},
				Conditions: []ranger.RangerPolicyItemCondition{{Type: "expression", Values: []string{"ctx.getClientIPAddress() != '10.0.0.1'"}}}}}},
	)
	e, err := policy.NewEngine(&ranger.Bundle{Policies: sp}, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !e.ConditionsReadRequest() || !e.ConditionsReadRequestedResources() {
		t.Fatal("the bundle's conditions read the request and its resources")
	}
	return e
}

func TestRequestContextConditions(t *testing.T) {
	eng := conditionEngine(t)
	rw := New(Options{})
	env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	session := func(client string) *Session {
		subj := testSubjects["bob"]
		return &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo", ClientAddr: client,
			SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	}
	run := func(sess *Session, sql string) *Result {
		return rw.Rewrite(context.Background(), env, sess, sql)
	}
	local := session("10.0.0.1")
	for _, sql := range []string{
		"SELECT ssn FROM sales.orders",
		"SELECT name FROM hr.employees",
		"SELECT o.ssn, e.id FROM sales.orders o JOIN hr.employees e ON e.id = o.id",
		"SELECT ssn FROM sales.orders; SELECT name FROM hr.employees", // two statements, two requests
	} {
		if r := run(local, sql); r.Err != nil {
			t.Errorf("%s: %v", sql, r.Err)
		}
	}
	for _, sql := range []string{
		"SELECT o.ssn, e.name FROM sales.orders o JOIN hr.employees e ON e.id = o.id",
		"SELECT ssn FROM sales.orders WHERE id IN (SELECT id FROM hr.employees WHERE name LIKE 'M%')",
		"SELECT ssn FROM sales.orders UNION ALL SELECT name FROM hr.employees",
	} {
		for i := 0; i < 2; i++ { // again from the cache
			r := run(local, sql)
			want := Denial{Database: "sales", Table: "orders", Column: "ssn", Access: "select", PolicyID: 990}
			if r.Err == nil || r.Err.Denied == nil || *r.Err.Denied != want || !strings.Contains(r.Err.Message, `user "bob" has no select access to column sales.orders.ssn`) {
				t.Errorf("%s (run %d): want a denial of sales.orders.ssn by policy 990, got %+v", sql, i+1, r.Err)
			}
		}
	}
	// The client's address reaches the script, and the cache keeps one
	// rewrite per client.
	const q = "SELECT name FROM sales.regions"
	if r := run(local, q); r.Err != nil {
		t.Errorf("from 10.0.0.1: %v", r.Err)
	}
	if r := run(session("10.0.0.2"), q); r.Err == nil || r.Err.Denied == nil || r.Err.Denied.PolicyID != 991 {
		t.Errorf("from 10.0.0.2: want a denial by policy 991, got %+v", r.Err)
	}
	if r := run(local, q); r.Err != nil {
		t.Errorf("from 10.0.0.1 again: %v", r.Err)
	}
}

// Without conditions that read the request, the client is not part of the
// cache key and no context is built.
func TestNoRequestContextWithoutConditions(t *testing.T) {
	env := &Env{Policy: policy.Snapshot{Engine: testEngine(t), Generation: 1}, Catalog: testCatalog()}
	a := &Session{IdentityKey: "x", ClientAddr: "10.0.0.1"}
	b := &Session{IdentityKey: "x", ClientAddr: "10.0.0.2"}
	if newCacheKey(env, a, "SELECT 1") != newCacheKey(env, b, "SELECT 1") {
		t.Error("the client must not split the cache when no condition reads it")
	}
	r := &stmtRewriter{env: env, sess: a}
	if r.requestContext() != nil || r.statementContext() != nil {
		t.Error("no request context without conditions that read it")
	}
}
