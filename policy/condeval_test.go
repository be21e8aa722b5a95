package policy

import (
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// condEngine: the stock hive service-def with the request conditions, an
// allow-all policy on db d and one deny policy per case, each on its own
// table, for everyone, under one condition.
func condEngine(t *testing.T, denies map[string]ranger.RangerPolicyItemCondition) *Engine {
	t.Helper()
	sd := StockHiveServiceDef()
	const pkg = "org.apache.ranger.plugin.conditionevaluator."
	sd.PolicyConditions = []ranger.RangerPolicyConditionDef{
		{Name: "together", Evaluator: pkg + "RangerHiveResourcesAccessedTogetherCondition"},
		{Name: "apart", Evaluator: pkg + "RangerHiveResourcesNotAccessedTogetherCondition"},
		{Name: "in", Evaluator: pkg + "RangerContextAttributeValueInCondition", EvaluatorOptions: ranger.StringMap{"attributeName": "site"}},
		{Name: "notin", Evaluator: pkg + "RangerContextAttributeValueNotInCondition", EvaluatorOptions: ranger.StringMap{"attributeName": "site"}},
		{Name: "script", Evaluator: pkg + "RangerScriptConditionEvaluator"},
	}
	sel := []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}
	all := map[string]ranger.RangerPolicyResource{"database": {Values: []string{"d"}}, "table": {Values: []string{"*"}}, "column": {Values: []string{"*"}}}
	sp := &ranger.ServicePolicies{ServiceName: "s", ServiceDef: sd, Policies: []ranger.RangerPolicy{
		{ID: 1, IsEnabled: true, Resources: all, PolicyItems: []ranger.RangerPolicyItem{{Accesses: sel, Groups: []string{"public"}}}},
	}}
	id := int64(10)
	for table, c := range denies {
		sp.Policies = append(sp.Policies, ranger.RangerPolicy{ID: id, IsEnabled: true,
			Resources:       map[string]ranger.RangerPolicyResource{"database": {Values: []string{"d"}}, "table": {Values: []string{table}}, "column": {Values: []string{"*"}}},
			DenyPolicyItems: []ranger.RangerPolicyItem{{Accesses: sel, Groups: []string{"public"}, Conditions: []ranger.RangerPolicyItemCondition{c}}}})
		id++
	}
	e, err := NewEngine(&ranger.Bundle{Policies: sp}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRequestConditions(t *testing.T) {
	cond := func(typ string, vals ...string) ranger.RangerPolicyItemCondition {
		return ranger.RangerPolicyItemCondition{Type: typ, Values: vals}
	}
	e := condEngine(t, map[string]ranger.RangerPolicyItemCondition{
		"t1": cond("together", "d.t1.a", "d.t2.b"),
		"t3": cond("together", "d.t3"), // one spec, table level: two columns of t3 match it twice
		"t4": cond("apart", "d.t4.a", "d.t5.b"),
		"t6": cond("in", "lab", "hq"),
		"t7": cond("notin", "lab"),
		"t8": cond("together", "d..t1.a.x"), // four elements: no matcher, the condition holds
	})
	if !e.ConditionsReadRequest() || !e.ConditionsReadRequestedResources() {
		t.Fatal("flags")
	}
	s := &Subject{User: "u"}
	col := func(tbl, c string) Resource { return Resource{Database: "d", Table: tbl, Column: c} }
	ctx := func(rs ...Resource) *RequestContext { return &RequestContext{RequestedResources: rs} }
	cases := []struct {
		name string
		res  Resource
		ctx  *RequestContext
		want bool
	}{
		{"together: no context", col("t1", "a"), nil, true},
		{"together: alone", col("t1", "a"), ctx(col("t1", "a")), true},
		{"together: with another column", col("t1", "a"), ctx(col("t1", "a"), col("t1", "c")), true},
		{"together: both", col("t1", "a"), ctx(col("t1", "a"), col("t2", "b")), false},
		{"together: both, asking for another column", col("t1", "c"), ctx(col("t1", "a"), col("t2", "b"), col("t1", "c")), false},
		{"together: b twice is one resource", col("t1", "c"), ctx(col("t2", "b"), col("t2", "b")), true},
		{"together: table spec, two columns", col("t3", "a"), ctx(col("t3", "a"), col("t3", "b")), false},
		{"together: table spec, table-level request", Resource{Database: "d", Table: "t3"}, ctx(Resource{Database: "d", Table: "t3"}, col("x", "y")), true},
		{"together: a column spec does not match a table", col("t1", "a"), ctx(col("t1", "a"), Resource{Database: "d", Table: "t2"}), true},
		{"together: no matcher", col("t8", "a"), ctx(col("t1", "a"), col("t2", "b")), false},
		{"apart: no context holds", col("t4", "a"), nil, false},
		{"apart: alone holds", col("t4", "a"), ctx(col("t4", "a"), col("t4", "c")), false},
		{"apart: both, the deny does not apply", col("t4", "a"), ctx(col("t4", "a"), col("t5", "b")), true},
		{"in: no context value holds", col("t6", "a"), &RequestContext{}, false},
		{"in: listed", col("t6", "a"), &RequestContext{Attributes: map[string]string{"site": "hq"}}, false},
		{"in: not listed", col("t6", "a"), &RequestContext{Attributes: map[string]string{"site": "home"}}, true},
		{"not in: listed", col("t7", "a"), &RequestContext{Attributes: map[string]string{"site": "lab"}}, true},
		{"not in: not listed", col("t7", "a"), &RequestContext{Attributes: map[string]string{"site": "home"}}, false},
	}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range cases {
		if d := e.AccessWithContext(s, c.res, "select", at, c.ctx); d.Allowed != c.want {
			t.Errorf("%s: allowed = %v (%s), want %v", c.name, d.Allowed, d.Reason, c.want)
		}
	}
}

// A failing or over-budget script fails closed: as a deny it denies (Ranger
// would take it as false and allow).
func TestScriptConditionFailsClosed(t *testing.T) {
	cond := func(src string) ranger.RangerPolicyItemCondition {
		return ranger.RangerPolicyItemCondition{Type: "script", Values: []string{src}}
	}
	long := "false"
	for i := 0; i < 1100; i++ {
		long += " || false"
	}
	e := condEngine(t, map[string]ranger.RangerPolicyItemCondition{
		"bad":     cond("ctx.noSuchFunction()"),
		"budget":  cond(long),
		"syntax":  cond("while (true) {}"),
		"false":   cond("IS_IN_GROUP('nobody')"),
		"expired": cond("IS_ACCESS_TIME_AFTER('2025/01/01 00:01')"),
	})
	s := &Subject{User: "u"}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for tbl, want := range map[string]bool{"bad": false, "budget": false, "syntax": false, "false": true, "expired": true} {
		if d := e.Access(s, Resource{Database: "d", Table: tbl, Column: "c"}, "select", at); d.Allowed != want {
			t.Errorf("%s: allowed = %v (%s), want %v", tbl, d.Allowed, d.Reason, want)
		}
	}
	// The access-time script denies from 00:01 on; cached decisions
	// must not outlive that: the time epoch moves every minute.
	if d := e.Access(s, Resource{Database: "d", Table: "expired", Column: "c"}, "select", at.Add(2*time.Minute)); d.Allowed {
		t.Errorf("after the time: %s", d.Reason)
	}
	if e.TimeEpoch(at) == e.TimeEpoch(at.Add(2*time.Minute)) {
		t.Error("a script reading the time must make the epoch move")
	}
	if e.ConditionsReadRequest() {
		t.Error("no script here reads the client")
	}
}
