package policy

import (
	"testing"

	"github.com/pgranger/pgranger/ranger"
)

// Ranger's ResourceMatchingScope SELF_OR_DESCENDANTS and
// isDescendantDenyIgnored: a policy on a column below the requested table
// applies with the scope; its deny counts only when asked.
func TestMatchingScopeAndDescendantDeny(t *testing.T) {
	rs := func(db, tbl, col string) map[string]ranger.RangerPolicyResource {
		return map[string]ranger.RangerPolicyResource{"database": {Values: []string{db}}, "table": {Values: []string{tbl}}, "column": {Values: []string{col}}}
	}
	item := func(access string, users ...string) []ranger.RangerPolicyItem {
		return []ranger.RangerPolicyItem{{Accesses: []ranger.RangerPolicyItemAccess{{Type: access, IsAllowed: true}}, Users: users}}
	}
	e, err := NewEngine(&ranger.Bundle{Policies: &ranger.ServicePolicies{ServiceName: "hive", Policies: []ranger.RangerPolicy{
		{ID: 1, IsEnabled: true, Resources: rs("db", "t", "public_col"), PolicyItems: item("select", "ann", "bob")},
		{ID: 2, IsEnabled: true, Resources: rs("db", "t", "secret"), DenyPolicyItems: item("select", "bob")},
	}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	table := map[string][]string{"database": {"db"}, "table": {"t"}}
	for _, c := range []struct {
		name    string
		user    string
		req     Request
		allowed bool
		id      int64
	}{
		{"select on the table, scope SELF: the column policies do not apply", "ann", Request{Resource: table, Access: "select"}, false, 0},
		{"select with SELF_OR_DESCENDANTS: a column allows", "ann", Request{Resource: table, Access: "select", SelfOrDescendants: true}, true, 1},
		{"bob: the column deny below is ignored by default", "bob", Request{Resource: table, Access: "select", SelfOrDescendants: true}, true, 1},
		{"bob: the column deny counts when asked", "bob", Request{Resource: table, Access: "select", SelfOrDescendants: true, DescendantDeny: true}, false, 2},
		{"bob `_any`: allowed, descendant deny ignored", "bob", Request{Resource: table, Access: "_any"}, true, 1},
		{"bob `_any`, descendant deny counted: denied", "bob", Request{Resource: table, Access: "_any", DescendantDeny: true}, false, 2},
	} {
		c.req.At = t0
		d := e.AccessRequest(subj(c.user), c.req)
		if d.Allowed != c.allowed || d.PolicyID != c.id {
			t.Errorf("%s: %+v, want allowed=%v id=%d", c.name, d, c.allowed, c.id)
		}
	}
}
