package policy

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

const adminDoc = `{"serviceName":"hive","policyVersion":1,
 "serviceConfig":{"ranger.plugin.super.users":"root","ranger.plugin.super.groups":"dba"},
 "policies":[
  {"id":1,"name":"sales admin","resources":{"database":{"values":["sales"]},"table":{"values":["*"]},"column":{"values":["*"]}},
   "policyItems":[{"users":["alice"],"accesses":[{"type":"select"}],"delegateAdmin":true},
                  {"users":["dave"],"accesses":[{"type":"select"}],"delegateAdmin":false}]},
  {"id":2,"name":"orders admins","resources":{"database":{"values":["sales"]},"table":{"values":["orders"]},"column":{"values":["*"]}},
   "policyItems":[{"groups":["admins"],"accesses":[{"type":"all"}],"delegateAdmin":true}]},
  {"id":3,"name":"hr","resources":{"database":{"values":["hr"]},"table":{"values":["employees"]},"column":{"values":["*"]}},
   "policyItems":[{"users":["bob"],"accesses":[{"type":"select"}],"delegateAdmin":true}],
   "denyPolicyItems":[{"users":["bob"],"accesses":[{"type":"select"}]}]},
  {"id":4,"name":"expired","resources":{"database":{"values":["ops"]},"table":{"values":["*"]},"column":{"values":["*"]}},
   "validitySchedules":[{"startTime":"2020/01/01 00:00:00","endTime":"2021/01/01 00:00:00"}],
   "policyItems":[{"users":["erin"],"accesses":[{"type":"select"}],"delegateAdmin":true}]},
  {"id":5,"name":"disabled","isEnabled":false,"resources":{"database":{"values":["ops"]},"table":{"values":["*"]},"column":{"values":["*"]}},
   "policyItems":[{"users":["frank"],"accesses":[{"type":"select"}],"delegateAdmin":true}]}
 ]}`

// Who may administer what: Ranger's delegated-admin rule, case by case.
func TestDelegatedAdmin(t *testing.T) {
	e := testEngine(t, adminDoc)
	for _, tc := range []struct {
		name     string
		s        *Subject
		r        Resource
		accesses []string
		allowed  bool
		super    bool
		ids      string
		missing  string
	}{
		{"a wildcard policy covers a table", subj("alice"), res("sales", "orders", "*"), []string{"select"}, true, false, "1", ""},
		{"and one of its columns", subj("alice"), res("sales", "orders", "ssn"), []string{"select"}, true, false, "1", ""},
		{"and the table itself (row filters)", subj("alice"), res("sales", "orders", ""), []string{"select"}, true, false, "1", ""},
		{"and every table (ALL TABLES IN SCHEMA)", subj("alice"), res("sales", "*", "*"), []string{"select"}, true, false, "1", ""},
		{"an access the item does not give is missing", subj("alice"), res("sales", "orders", "*"), []string{"select", "update"}, false, false, "1", "update"},
		{"all gives every access", subj("carl", "admins"), res("sales", "orders", "*"), []string{"update", "select", "all"}, true, false, "2", ""},
		{"a table policy does not cover every table", subj("carl", "admins"), res("sales", "*", "*"), []string{"select"}, false, false, "", "select"},
		{"an item without delegateAdmin gives nothing", subj("dave"), res("sales", "orders", "*"), []string{"select"}, false, false, "", "select"},
		{"a deny in the same policy cancels it", subj("bob"), res("hr", "employees", "*"), []string{"select"}, false, false, "", "select"},
		{"an ended schedule gives nothing", subj("erin"), res("ops", "jobs", "*"), []string{"select"}, false, false, "", "select"},
		{"a disabled policy gives nothing", subj("frank"), res("ops", "jobs", "*"), []string{"select"}, false, false, "", "select"},
		{"a super user may", subj("root"), res("hr", "employees", "*"), []string{"all"}, true, true, "", ""},
		{"a super group may", subj("x", "dba"), res("hr", "employees", "*"), []string{"select"}, true, true, "", ""},
		{"nothing asked is nothing allowed", subj("alice"), res("sales", "orders", "*"), nil, false, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := e.DelegatedAdmin(tc.s, tc.r, tc.accesses, t0)
			var ids []string
			for _, id := range d.PolicyIDs {
				ids = append(ids, strconv.FormatInt(id, 10))
			}
			if d.Allowed != tc.allowed || d.SuperUser != tc.super || strings.Join(ids, ",") != tc.ids || strings.Join(d.Missing, ",") != tc.missing {
				t.Errorf("got %+v, want allowed=%t super=%t ids=%s missing=%s", d, tc.allowed, tc.super, tc.ids, tc.missing)
			}
		})
	}
}

func TestPolicyValidityEnd(t *testing.T) {
	e := testBundle(t, `{"serviceName":"hive","policies":[
	  {"id":1,"name":"two","validitySchedules":[{"endTime":"2026/01/01 00:00:00"},{"endTime":"2026/02/01 00:00:00","timeZone":"Europe/Paris"}]},
	  {"id":2,"name":"open","validitySchedules":[{"endTime":"2026/01/01 00:00:00"},{"startTime":"2026/01/01 00:00:00"}]},
	  {"id":3,"name":"none"}]}`)
	ps := e.Policies.Policies
	end, ok := PolicyValidityEnd(&ps[0])
	if !ok || !end.Equal(time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC)) {
		t.Errorf("two schedules: %v %t, want the later end, in its zone", end, ok)
	}
	if _, ok := PolicyValidityEnd(&ps[1]); ok {
		t.Error("a schedule without an end: the policy never ends")
	}
	if _, ok := PolicyValidityEnd(&ps[2]); ok {
		t.Error("no schedule: no end")
	}
}
