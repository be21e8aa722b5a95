package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

func TestAccessResourceMatching(t *testing.T) {
	e := testEngine(t, `{"policies": [
	  {"id": 1, "name": "wild", "resources": {"database": {"values": ["sa*"]}, "table": {"values": ["ord?rs"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 2, "name": "excludes", "resources": {"database": {"values": ["fin"]}, "table": {"values": ["*"]}, "column": {"values": ["ssn", "salary"], "isExcludes": true}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 3, "name": "empty values", "resources": {"database": {"values": ["empt"]}, "table": {"values": []}, "column": {"values": [""]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 4, "name": "user token", "resources": {"database": {"values": ["home_{USER}"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 5, "name": "owner item", "resources": {"database": {"values": ["own"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "all"}], "users": ["{OWNER}"]}]},
	  {"id": 6, "name": "current user item", "resources": {"database": {"values": ["anyone"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "users": ["{USER}"]}]},
	  {"id": 7, "name": "excluded dbs", "resources": {"database": {"values": ["sys*"], "isExcludes": true}, "table": {"values": ["pub"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "users": ["eve"]}]}
	]}`)
	alice := subj("alice")
	runAccess(t, e, []accessCase{
		{"wildcards", alice, res("sales", "orders", "id"), "select", t0, true, 1},
		{"ignoreCase", alice, res("SALES", "Orders", "ID"), "select", t0, true, 1},
		{"question mark one char", alice, res("sales", "ordxrs", "id"), "select", t0, true, 1},
		{"question mark needs a char", alice, res("sales", "ordrs", "id"), "select", t0, false, 0},
		{"prefix", alice, res("dsales", "orders", "id"), "select", t0, false, 0},
		{"excludes: other column", alice, res("fin", "pay", "name"), "select", t0, true, 2},
		{"excludes: excluded column", alice, res("fin", "pay", "ssn"), "select", t0, false, 0},
		{"excludes: excluded column any case", alice, res("fin", "pay", "SALARY"), "select", t0, false, 0},
		{"excludes: all values requested are not excluded", alice, res("fin", "pay", "*"), "select", t0, false, 0},
		{"excludes: table level is a descendant", alice, res("fin", "pay", ""), "select", t0, false, 0},
		{"excludes: _any on the table", alice, res("fin", "pay", ""), "", t0, true, 2},
		{"empty values match all", alice, res("empt", "x", "y"), "select", t0, true, 3},
		{"{USER} in resource", alice, res("home_alice", "t", "c"), "select", t0, true, 4},
		{"{USER} in resource, other user", alice, res("home_bob", "t", "c"), "select", t0, false, 0},
		{"{OWNER} is the owner", alice, Resource{Database: "own", Table: "t", Column: "c", Owner: "alice"}, "drop", t0, true, 5},
		{"{OWNER} someone else", alice, Resource{Database: "own", Table: "t", Column: "c", Owner: "bob"}, "drop", t0, false, 0},
		{"{OWNER} unknown", alice, res("own", "t", "c"), "drop", t0, false, 0},
		{"{USER} item", alice, res("anyone", "t", "c"), "select", t0, true, 6},
		{"database excludes", subj("eve"), res("sales", "pub", "c"), "select", t0, true, 7},
		{"database excludes hit", subj("eve"), res("sys1", "pub", "c"), "select", t0, false, 0},
	})
}

func TestAccessScopes(t *testing.T) {
	e := testEngine(t, `{"policies": [
	  {"id": 1, "name": "one column", "resources": {"database": {"values": ["d"]}, "table": {"values": ["t"]}, "column": {"values": ["c1"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 2, "name": "whole table", "resources": {"database": {"values": ["d"]}, "table": {"values": ["u"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 3, "name": "database only", "resources": {"database": {"values": ["d2"]}},
	   "policyItems": [{"accesses": [{"type": "select"}, {"type": "create"}], "groups": ["public"]}]}
	]}`)
	s := subj("alice")
	runAccess(t, e, []accessCase{
		{"table-level on db/t/c1 does not match", s, res("d", "t", ""), "select", t0, false, 0},
		{"column c1 matches", s, res("d", "t", "c1"), "select", t0, true, 1},
		{"_any on the table matches the descendant", s, res("d", "t", ""), "_any", t0, true, 1},
		{"empty access is _any", s, res("d", "t", ""), "", t0, true, 1},
		{"table-level on db/u/*", s, res("d", "u", ""), "select", t0, true, 2},
		{"db policy does not cover tables", s, res("d2", "t", ""), "select", t0, false, 0},
		{"db policy covers the db", s, res("d2", "", ""), "create", t0, true, 3},
		// Both policies allow; d/u/* sorts first (Ranger's evalOrder favours '*').
		{"_any on the db", s, res("d", "", ""), "", t0, true, 2},
		{"_any on nothing", s, res("", "", ""), "", t0, true, 2},
	})
}

func TestAccessCombining(t *testing.T) {
	e := testEngine(t, `{"policies": [
	  {"id": 10, "name": "allow all x", "resources": {"database": {"values": ["x"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}, {"type": "update"}], "groups": ["public"]}],
	   "allowExceptions": [{"accesses": [{"type": "select"}], "users": ["bob"]}]},
	  {"id": 11, "name": "deny g on x.t", "resources": {"database": {"values": ["x"]}, "table": {"values": ["t"]}, "column": {"values": ["*"]}},
	   "denyPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["g"]}],
	   "denyExceptions": [{"accesses": [{"type": "select"}], "users": ["carol"]}]},
	  {"id": 12, "name": "override for u", "policyPriority": 1, "resources": {"database": {"values": ["x"]}, "table": {"values": ["t"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "users": ["u"]}]},
	  {"id": 13, "name": "bob elsewhere", "resources": {"database": {"values": ["x"]}, "table": {"values": ["t*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "users": ["bob"]}]},
	  {"id": 14, "name": "z deny all else", "isDenyAllElse": true, "resources": {"database": {"values": ["z"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "users": ["dave"]}]},
	  {"id": 15, "name": "z everyone", "resources": {"database": {"values": ["z"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 16, "name": "disabled deny", "isEnabled": false, "resources": {"database": {"values": ["x"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "denyPolicyItems": [{"accesses": [{"type": "update"}], "groups": ["public"]}]},
	  {"id": 17, "name": "override deny", "policyPriority": 1, "resources": {"database": {"values": ["x"]}, "table": {"values": ["secret"]}, "column": {"values": ["*"]}},
	   "denyPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 18, "name": "additional", "resources": {"database": {"values": ["a"]}, "table": {"values": ["t1"]}, "column": {"values": ["*"]}},
	   "additionalResources": [{"database": {"values": ["b"]}, "table": {"values": ["t2"]}, "column": {"values": ["*"]}}],
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]}
	]}`)
	runAccess(t, e, []accessCase{
		{"allowed by public", subj("alice"), res("x", "t", "c"), "select", t0, true, 10},
		{"deny beats allow within a priority", subj("gus", "g"), res("x", "t", "c"), "select", t0, false, 11},
		{"deny applies only where it matches", subj("gus", "g"), res("x", "other", "c"), "select", t0, true, 10},
		{"deny exception", subj("carol", "g"), res("x", "t", "c"), "select", t0, true, 10},
		{"override allow beats normal deny", &Subject{User: "u", Groups: []string{"g"}}, res("x", "t", "c"), "select", t0, true, 12},
		{"override deny beats normal allow", subj("alice"), res("x", "secret", "c"), "select", t0, false, 17},
		{"allow exception is scoped to its policy", subj("bob"), res("x", "t", "c"), "select", t0, true, 13},
		{"allow exception without other grant", subj("bob"), res("x", "other", "c"), "select", t0, false, 0},
		{"allow exception only for its access", subj("bob"), res("x", "other", "c"), "update", t0, true, 10},
		{"deny-all-else denies others", subj("erin"), res("z", "t", "c"), "select", t0, false, 14},
		{"deny-all-else allows listed", subj("dave"), res("z", "t", "c"), "select", t0, true, 14},
		{"disabled policy ignored", subj("alice"), res("x", "t", "c"), "update", t0, true, 10},
		{"additionalResources", subj("alice"), res("b", "t2", "c"), "select", t0, true, 18},
		{"main resources still match", subj("alice"), res("a", "t1", "c"), "select", t0, true, 18},
		{"default deny", subj("alice"), res("nowhere", "t", "c"), "select", t0, false, 0},
	})
	d := e.Access(subj("alice"), res("nowhere", "t", "c"), "select", t0)
	if d.Reason != "no policy grants select" {
		t.Errorf("reason = %q", d.Reason)
	}
	d = e.Access(subj("gus", "g"), res("x", "t", "c"), "select", t0)
	if d.Reason != "denied by policy 11" {
		t.Errorf("reason = %q", d.Reason)
	}
}

func TestAccessTypes(t *testing.T) {
	e := testEngine(t, `{"policies": [
	  {"id": 1, "name": "all", "resources": {"database": {"values": ["d"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "ALL"}], "users": ["admin"]}, {"accesses": [{"type": "Select"}], "users": ["reader"]}]},
	  {"id": 2, "name": "global", "resources": {"global": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "all"}], "users": ["admin"]}]},
	  {"id": 3, "name": "not allowed access", "resources": {"database": {"values": ["e"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "all", "isAllowed": false}], "users": ["admin"]}]}
	]}`)
	runAccess(t, e, []accessCase{
		{"all implies drop", subj("admin"), res("d", "t", ""), "drop", t0, true, 1},
		{"all implies select", subj("admin"), res("d", "t", "c"), "SELECT", t0, true, 1},
		{"access names are case-insensitive", subj("reader"), res("d", "t", "c"), "select", t0, true, 1},
		{"select does not imply update", subj("reader"), res("d", "t", "c"), "update", t0, false, 0},
		{"all does not imply tempudfadmin", subj("admin"), Resource{}, "tempudfadmin", t0, false, 0},
		{"disallowed all implies nothing", subj("admin"), res("e", "t", "c"), "select", t0, false, 0},
	})
	// tempudfadmin is checked on the global resource, which Resource cannot name.
	d := e.AccessRequest(subj("admin"), Request{Resource: map[string][]string{"global": {"*"}}, Access: "tempudfadmin", At: t0})
	if d.Allowed {
		t.Errorf("all must not imply tempudfadmin: %+v", d)
	}
	d = e.AccessRequest(subj("admin"), Request{Resource: map[string][]string{"global": {"x"}}, Access: "serviceadmin", At: t0})
	if !d.Allowed || d.PolicyID != 2 {
		t.Errorf("all implies serviceadmin on global: %+v", d)
	}
}

func TestSuperUsers(t *testing.T) {
	e := testEngine(t, `{"serviceConfig": {"ranger.plugin.super.users": "root, svc", "ranger.plugin.super.groups": "admins"},
	 "policies": [
	  {"id": 1, "name": "deny all", "resources": {"database": {"values": ["*"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "denyPolicyItems": [{"accesses": [{"type": "all"}], "groups": ["public"]}]},
	  {"id": 2, "name": "mask", "policyType": 1, "resources": {"database": {"values": ["d"]}, "table": {"values": ["t"]}, "column": {"values": ["c"]}},
	   "dataMaskPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK"}}]},
	  {"id": 3, "name": "filter", "policyType": 2, "resources": {"database": {"values": ["d"]}, "table": {"values": ["t"]}},
	   "rowFilterPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "rowFilterInfo": {"filterExpr": "1=0"}}]}
	]}`)
	for _, s := range []*Subject{subj("root"), subj("svc"), subj("x", "admins")} {
		if !e.IsSuperUser(s) {
			t.Errorf("%+v should be a super user", s)
		}
		d := e.Access(s, res("d", "t", "c"), "select", t0)
		if !d.Allowed || d.PolicyID != -1 {
			t.Errorf("super user access: %+v", d)
		}
		if m := e.Mask(s, res("d", "t", "c"), t0); m != (Mask{}) {
			t.Errorf("super user masked: %+v", m)
		}
		if rf := e.RowFilter(s, res("d", "t", ""), t0); len(rf.Exprs) != 0 {
			t.Errorf("super user filtered: %+v", rf)
		}
	}
	if e.IsSuperUser(subj("bob", "users")) || e.IsSuperUser(nil) {
		t.Errorf("bob is not a super user")
	}
	if d := e.Access(subj("bob"), res("d", "t", "c"), "select", t0); d.Allowed || d.PolicyID != 1 {
		t.Errorf("bob: %+v", d)
	}
	if m := e.Mask(subj("bob"), res("d", "t", "c"), t0); m.Type != "MASK" || m.Transformer != "mask({col})" {
		t.Errorf("bob mask: %+v", m)
	}
	if d := e.Access(subj("bob"), res("d", "t", "c"), "_super_user", t0); d.Allowed || d.PolicyID != -1 {
		t.Errorf("_super_user for bob: %+v", d)
	}
}

func TestConditionsFailClosed(t *testing.T) {
	b := testBundle(t, `{"policies": [
	  {"id": 1, "name": "allow with unknown condition", "resources": {"database": {"values": ["a"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "conditions": [{"type": "ip-range", "values": ["10.0.0.0/8"]}]}]},
	  {"id": 2, "name": "allow everyone on b", "resources": {"database": {"values": ["b"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 3, "name": "deny with unknown condition", "resources": {"database": {"values": ["b"]}, "table": {"values": ["t"]}, "column": {"values": ["*"]}},
	   "denyPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "conditions": [{"type": "no-such-type", "values": ["x"]}]}]},
	  {"id": 4, "name": "expression", "resources": {"database": {"values": ["c"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "conditions": [{"type": "expression", "values": ["IS_IN_GROUP('analysts') && !IS_IN_ROLE('banned')"]}]}]},
	  {"id": 5, "name": "unsupported script", "resources": {"database": {"values": ["d"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "conditions": [{"type": "expression", "values": ["USER.dept == 'x'"]}]}]},
	  {"id": 6, "name": "policy-level unknown", "conditions": [{"type": "ip-range", "values": ["1.2.3.4"]}],
	   "resources": {"database": {"values": ["e"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 7, "name": "deny exception with unknown", "resources": {"database": {"values": ["f"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}],
	   "denyPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["g"]}],
	   "denyExceptions": [{"accesses": [{"type": "select"}], "users": ["ann"], "conditions": [{"type": "ip-range", "values": ["x"]}]}]},
	  {"id": 8, "name": "allow exception with unknown", "resources": {"database": {"values": ["h"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}],
	   "allowExceptions": [{"accesses": [{"type": "select"}], "users": ["ann"], "conditions": [{"type": "ip-range", "values": ["x"]}]}]},
	  {"id": 9, "name": "template", "resources": {"database": {"values": ["k"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "conditions": [{"type": "not-expired", "values": ["yes"]}]}]}
	]}`)
	b.Policies.ServiceDef = hiveDefWithConditions()
	e, err := NewEngine(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	analyst := &Subject{User: "ann", Groups: []string{"analysts", "g"}}
	banned := &Subject{User: "ben", Groups: []string{"analysts"}, Roles: []string{"banned"}}
	runAccess(t, e, []accessCase{
		{"unknown condition never allows", analyst, res("a", "t", "c"), "select", t0, false, 0},
		{"unknown condition always denies", analyst, res("b", "t", "c"), "select", t0, false, 3},
		{"other tables unaffected", analyst, res("b", "u", "c"), "select", t0, true, 2},
		{"expression true", analyst, res("c", "t", "c"), "select", t0, true, 4},
		{"expression false", banned, res("c", "t", "c"), "select", t0, false, 0},
		{"expression outside the subset is unknown", analyst, res("d", "t", "c"), "select", t0, false, 0},
		{"policy-level unknown condition blocks allow", analyst, res("e", "t", "c"), "select", t0, false, 0},
		{"unknown deny exception does not cancel", analyst, res("f", "t", "c"), "select", t0, false, 7},
		{"unknown allow exception cancels", analyst, res("h", "t", "c"), "select", t0, false, 0},
		{"allow exception for others only", subj("zed"), res("h", "t", "c"), "select", t0, true, 8},
		// ctx.isAccessedBefore on a resource policy has no current tag: false.
		{"template without tag", analyst, res("k", "t", "c"), "select", t0, false, 0},
	})
}

func TestValiditySchedules(t *testing.T) {
	e := testEngine(t, `{"policies": [
	  {"id": 1, "name": "tokyo window", "resources": {"database": {"values": ["d"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "validitySchedules": [{"startTime": "2025/06/01 09:00:00", "endTime": "2025/06/01 18:00:00", "timeZone": "Asia/Tokyo"}],
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 2, "name": "gmt window", "resources": {"database": {"values": ["g"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "validitySchedules": [{"startTime": "2025/06/01 09:00:00", "endTime": "2025/06/01 18:00:00"}],
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 3, "name": "business hours", "resources": {"database": {"values": ["w"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "validitySchedules": [{"timeZone": "Europe/Paris", "recurrences": [{"schedule": {"minute": "0", "hour": "9", "dayOfMonth": "*", "dayOfWeek": "2-6", "month": "*", "year": "*"}, "interval": {"hours": 8}}]}],
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 4, "name": "expired deny", "resources": {"database": {"values": ["g"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "validitySchedules": [{"endTime": "2020/01/01 00:00:00"}],
	   "denyPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]}
	]}`)
	s := subj("alice")
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	paris, _ := time.LoadLocation("Europe/Paris")
	runAccess(t, e, []accessCase{
		{"tokyo start inclusive", s, res("d", "t", "c"), "select", time.Date(2025, 6, 1, 9, 0, 0, 0, tokyo), true, 1},
		{"tokyo end inclusive", s, res("d", "t", "c"), "select", time.Date(2025, 6, 1, 18, 0, 0, 0, tokyo), true, 1},
		{"tokyo after end", s, res("d", "t", "c"), "select", time.Date(2025, 6, 1, 18, 0, 1, 0, tokyo), false, 0},
		{"tokyo wall clock, not GMT", s, res("d", "t", "c"), "select", time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC), false, 0},
		{"blank zone is GMT", s, res("g", "t", "c"), "select", time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC), true, 2},
		{"recurrence: Monday 10:00 Paris", s, res("w", "t", "c"), "select", time.Date(2025, 6, 2, 10, 0, 0, 0, paris), true, 3},
		{"recurrence: Monday 17:00 Paris", s, res("w", "t", "c"), "select", time.Date(2025, 6, 2, 17, 0, 0, 0, paris), true, 3},
		{"recurrence: Monday 17:01 Paris", s, res("w", "t", "c"), "select", time.Date(2025, 6, 2, 17, 1, 0, 0, paris), false, 0},
		{"recurrence: Monday 08:59 Paris", s, res("w", "t", "c"), "select", time.Date(2025, 6, 2, 8, 59, 0, 0, paris), false, 0},
		{"recurrence: Sunday", s, res("w", "t", "c"), "select", time.Date(2025, 6, 1, 10, 0, 0, 0, paris), false, 0},
	})
}

func TestRoles(t *testing.T) {
	b := testBundle(t, `{"policies": [
	  {"id": 1, "name": "role based", "resources": {"database": {"values": ["d"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "roles": ["readers"]}]}
	]}`)
	roles, err := ranger.ParseRoles([]byte(`{"rangerRoles": [
	  {"name": "readers", "roles": [{"name": "analysts"}]},
	  {"name": "analysts", "users": [{"name": "ann"}], "groups": [{"name": "bi"}], "roles": [{"name": "interns"}]},
	  {"name": "interns", "users": [{"name": "ivan"}]},
	  {"name": "everyone", "groups": [{"name": "public"}]},
	  {"name": "loop1", "roles": [{"name": "loop2"}]},
	  {"name": "loop2", "roles": [{"name": "loop1"}], "users": [{"name": "lou"}]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	b.Roles = roles
	e, err := NewEngine(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		s    *Subject
		want string
	}{
		{subj("ann"), "analysts,everyone,readers"},
		{subj("ivan"), "analysts,everyone,interns,readers"},
		{subj("bea", "bi"), "analysts,everyone,readers"},
		{subj("zed"), "everyone"},
		{&Subject{User: "tok", Roles: []string{"interns", "interns"}}, "analysts,everyone,interns,readers"},
		{&Subject{User: "tok", Roles: []string{"unknown"}}, "everyone,unknown"},
		{subj("lou"), "everyone,loop1,loop2"},
	}
	for _, tc := range tests {
		if got := strings.Join(e.RolesOf(tc.s), ","); got != tc.want {
			t.Errorf("RolesOf(%+v) = %s, want %s", tc.s, got, tc.want)
		}
	}
	runAccess(t, e, []accessCase{
		{"nested role through user", subj("ann"), res("d", "t", "c"), "select", t0, true, 1},
		{"nested role through group", subj("bea", "bi"), res("d", "t", "c"), "select", t0, true, 1},
		{"transitive role", subj("ivan"), res("d", "t", "c"), "select", t0, true, 1},
		{"token role", &Subject{User: "tok", Roles: []string{"readers"}}, res("d", "t", "c"), "select", t0, true, 1},
		{"no role", subj("zed"), res("d", "t", "c"), "select", t0, false, 0},
	})
}

func TestAnyAccessIgnoresDescendantDeny(t *testing.T) {
	e := testEngine(t, `{"policies": [
	  {"id": 1, "name": "deny one table", "resources": {"database": {"values": ["d"]}, "table": {"values": ["secret"]}, "column": {"values": ["*"]}},
	   "denyPolicyItems": [{"accesses": [{"type": "all"}], "groups": ["public"]}]},
	  {"id": 2, "name": "allow another", "resources": {"database": {"values": ["d"]}, "table": {"values": ["open"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 3, "name": "deny all else on e", "isDenyAllElse": true, "resources": {"database": {"values": ["e"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "users": ["ed"]}]}
	]}`)
	runAccess(t, e, []accessCase{
		{"USE d: a deny below does not deny the database", subj("alice"), res("d", "", ""), "", t0, true, 2},
		// "all" does not imply tempudfadmin, so not every access type is
		// denied: _any stays undecided and ends in the default deny.
		{"_any on the denied table", subj("alice"), res("d", "secret", ""), "", t0, false, 0},
		{"select on the denied table", subj("alice"), res("d", "secret", ""), "select", t0, false, 1},
		{"deny-all-else at the same level denies", subj("alice"), res("e", "", ""), "", t0, false, 3},
		{"deny-all-else allows its user", subj("ed"), res("e", "", ""), "", t0, true, 3},
	})
}

func TestSecurityZones(t *testing.T) {
	e := testEngine(t, `{"policies": [
	  {"id": 1, "name": "default allow", "resources": {"database": {"values": ["*"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]}
	 ],
	 "securityZones": {"finance": {"zoneName": "finance", "resources": [{"database": ["fin"]}],
	   "policies": [{"id": 100, "name": "finance only", "zoneName": "finance",
	     "resources": {"database": {"values": ["fin"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	     "policyItems": [{"accesses": [{"type": "select"}], "groups": ["finance"]}]}]}}
	}`)
	runAccess(t, e, []accessCase{
		{"outside the zone: default policies", subj("alice"), res("sales", "t", "c"), "select", t0, true, 1},
		{"inside the zone: only the zone's policies", subj("alice"), res("fin", "t", "c"), "select", t0, false, 0},
		{"inside the zone: zone policy allows", subj("fay", "finance"), res("fin", "t", "c"), "select", t0, true, 100},
		{"show databases: any zone", subj("fay", "finance"), Resource{}, "", t0, true, 1},
	})
}

func TestResourceExpressions(t *testing.T) {
	b := testBundle(t, `{"policies": [
	  {"id": 1, "name": "own department", "resources": {"database": {"values": ["${{USER.dept}}_db"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 2, "name": "everyone on shared", "resources": {"database": {"values": ["shared"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 3, "name": "unevaluable deny", "resources": {"database": {"values": ["shared"]}, "table": {"values": ["${{REQ.clientIPAddress}}"]}, "column": {"values": ["*"]}},
	   "denyPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
	  {"id": 4, "name": "unevaluable allow", "resources": {"database": {"values": ["${{TAG.x}}"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]}
	]}`)
	us, err := ranger.ParseUserStore([]byte(`{"userAttrMapping": {"ann": {"dept": "engg"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	b.UserStore = us
	e, err := NewEngine(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	runAccess(t, e, []accessCase{
		{"user attribute from the user store", subj("ann"), res("engg_db", "t", "c"), "select", t0, true, 1},
		{"user attribute from the subject", &Subject{User: "bo", Attributes: map[string]string{"dept": "ops"}}, res("ops_db", "t", "c"), "select", t0, true, 1},
		{"other department", subj("ann"), res("ops_db", "t", "c"), "select", t0, false, 0},
		{"missing attribute never allows", subj("cy"), res("_db", "t", "c"), "select", t0, false, 0},
		{"an unevaluable value still denies", subj("ann"), res("shared", "t", "c"), "select", t0, false, 3},
		{"an unevaluable value never allows", subj("ann"), res("anything", "t", "c"), "select", t0, false, 0},
	})
}
