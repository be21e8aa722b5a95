package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// conditionServiceDef is the stock hive service-def with the conditions
// Ranger's hive plugin offers: accessed-together and scripts.
func conditionServiceDef(t *testing.T) map[string]any {
	t.Helper()
	sd := policy.StockHiveServiceDef()
	const pkg = "org.apache.ranger.plugin.conditionevaluator."
	sd.PolicyConditions = []ranger.RangerPolicyConditionDef{
		{ItemID: 1, Name: "accessed-together", Evaluator: pkg + "RangerHiveResourcesAccessedTogetherCondition"},
		{ItemID: 2, Name: "not-accessed-together", Evaluator: pkg + "RangerHiveResourcesNotAccessedTogetherCondition"},
		{ItemID: 3, Name: "expression", Evaluator: pkg + "RangerScriptConditionEvaluator", EvaluatorOptions: ranger.StringMap{"engineName": "JavaScript"}},
	}
	b, err := json.Marshal(sd)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// denyWhen is a deny policy on database, tables and columns (comma
// lists) for everyone, under one condition.
func denyWhen(id int, db, table, column, condType string, values ...string) map[string]any {
	item := accessItem([]string{"public"}, "select")
	item["conditions"] = []any{map[string]any{"type": condType, "values": values}}
	return map[string]any{
		"id": id, "name": "deny " + condType + " " + db + "." + table, "policyType": 0, "isEnabled": true,
		"resources": map[string]any{
			"database": map[string]any{"values": []string{db}},
			"table":    map[string]any{"values": strings.Split(table, ",")},
			"column":   map[string]any{"values": strings.Split(column, ",")},
		},
		"denyPolicyItems": []any{item},
	}
}

// TestConditionsThroughProxy: Ranger conditions on real statements through
// the built proxy against real PostgreSQL. An accessed-together deny reads
// REQUESTED_RESOURCES, the tables and columns one statement reads: a.x
// and b.y each alone may be read, together they are denied. A script
// condition sees the client's address; one that fails or exceeds its
// budget denies (fail closed).
func TestConditionsThroughProxy(t *testing.T) {
	requireCluster(t)
	ctx := context.Background()
	if err := cluster.Exec(ctx, "demo", `
CREATE SCHEMA IF NOT EXISTS mutex;
GRANT USAGE ON SCHEMA mutex TO pgranger_svc;
DROP TABLE IF EXISTS mutex.a, mutex.b, mutex.err, mutex.budget, mutex.nodeny, mutex.local;
CREATE TABLE mutex.a (id int, x text, z text);
CREATE TABLE mutex.b (id int, y text);
INSERT INTO mutex.a VALUES (1, 'ax1', 'az1'), (2, 'ax2', 'az2');
INSERT INTO mutex.b VALUES (1, 'by1'), (2, 'by2');
CREATE TABLE mutex.err (v int);
CREATE TABLE mutex.budget (v int);
CREATE TABLE mutex.nodeny (v int);
CREATE TABLE mutex.local (v int);
INSERT INTO mutex.err VALUES (1); INSERT INTO mutex.budget VALUES (2);
INSERT INTO mutex.nodeny VALUES (3); INSERT INTO mutex.local VALUES (4);
GRANT SELECT ON ALL TABLES IN SCHEMA mutex TO pgranger_svc;`); err != nil {
		t.Fatal(err)
	}
	doc := demoPolicies(t)
	doc["serviceDef"] = conditionServiceDef(t)
	for _, tbl := range []string{"a", "b", "err", "budget", "nodeny"} {
		doc.add(accessPolicy(970+len(doc.policies()), "mutex", tbl, "*", []string{"public"}))
	}
	// a.x together with b.y: denied. The deny covers x and y only: with
	// column "*" every column a statement reading both reads is denied,
	// as in Hive (the condition looks at the statement, not the column).
	doc.add(denyWhen(980, "mutex", "a,b", "x,y", "accessed-together", "mutex.a.x", "mutex.b.y"))
	// A script that fails at run time, one over the step budget, one false.
	doc.add(denyWhen(981, "mutex", "err", "*", "expression", "ctx.noSuchFunction('x')"))
	doc.add(denyWhen(982, "mutex", "budget", "*", "expression", "false"+strings.Repeat(" || false", 1100)))
	doc.add(denyWhen(983, "mutex", "nodeny", "*", "expression", "IS_IN_GROUP('nobody-is-in-this-group')"))
	// An allow only for a loopback client, read from the request.
	local := accessPolicy(984, "mutex", "local", "*", []string{"public"})
	local["policyItems"].([]any)[0].(map[string]any)["conditions"] = []any{map[string]any{"type": "expression",
		"values": []string{"ctx.getClientIPAddress() == '127.0.0.1' && USER._name == ctx.getUser()"}}}
	doc.add(local)
	p := startProxy(t, proxyOptions{policies: doc.bytes(t)})
	conn := connect(t, p, "bob")

	equalLines(t, "a.x alone", rows(t, conn, "SELECT x FROM mutex.a ORDER BY id"), []string{"ax1", "ax2"})
	equalLines(t, "b.y alone", rows(t, conn, "SELECT y FROM mutex.b ORDER BY id"), []string{"by1", "by2"})
	equalLines(t, "a.z with b.y", rows(t, conn, "SELECT a.z, b.y FROM mutex.a JOIN mutex.b USING (id) ORDER BY id"),
		[]string{"az1|by1", "az2|by2"})
	denied := func(what, sql string) {
		t.Helper()
		for i := 0; i < 2; i++ { // the second time from the rewrite cache
			_, err := tryRows(conn, sql)
			msg := errString(err)
			if sqlstate(err) != "42501" || !strings.Contains(msg, `user "bob"`) || !strings.Contains(msg, "select access to column mutex.a.x") {
				t.Fatalf("%s (run %d): want 42501 naming bob, select and mutex.a.x, got %s", what, i+1, msg)
			}
		}
	}
	denied("a.x with b.y", "SELECT a.x, b.y FROM mutex.a JOIN mutex.b USING (id)")
	denied("b.y in a subquery", "SELECT x FROM mutex.a WHERE EXISTS (SELECT 1 FROM mutex.b WHERE b.y = a.x)")
	denied("b.y in another branch", "SELECT x FROM mutex.a UNION ALL SELECT y FROM mutex.b")
	// The statements alone still work after the denials.
	equalLines(t, "a.x alone again", rows(t, conn, "SELECT x FROM mutex.a WHERE id = 1"), []string{"ax1"})

	for tbl, why := range map[string]string{"err": "a failing script", "budget": "a script over its budget"} {
		_, err := tryRows(conn, "SELECT v FROM mutex."+tbl)
		msg := errString(err)
		if sqlstate(err) != "42501" || !strings.Contains(msg, `user "bob"`) || !strings.Contains(msg, "select access to column mutex."+tbl+".v") {
			t.Errorf("%s must deny: want 42501 naming bob, select and mutex.%s.v, got %s", why, tbl, msg)
		}
	}
	equalLines(t, "false script", rows(t, conn, "SELECT v FROM mutex.nodeny"), []string{"3"})
	equalLines(t, "loopback client", rows(t, conn, "SELECT v FROM mutex.local"), []string{"4"})
}
