package policy

import (
	"reflect"
	"testing"

	"github.com/pgranger/pgranger/ranger"
)

// Who may access a resource: allow items less allow exceptions, deny items
// (not from below the resource) less deny exceptions, the denied removed
// from the allowed; an item with a condition pgranger cannot evaluate
// counts as a deny, never as an allow.
func TestResourceAccessInfo(t *testing.T) {
	sd := hiveDefWithConditions()
	items := func(access string, users, groups []string, conds ...ranger.RangerPolicyItemCondition) []ranger.RangerPolicyItem {
		return []ranger.RangerPolicyItem{{Accesses: []ranger.RangerPolicyItemAccess{{Type: access, IsAllowed: true}}, Users: users, Groups: groups, Conditions: conds}}
	}
	rs := func(db, tbl, col string) map[string]ranger.RangerPolicyResource {
		m := map[string]ranger.RangerPolicyResource{"database": {Values: []string{db}}, "table": {Values: []string{tbl}}}
		if col != "" {
			m["column"] = ranger.RangerPolicyResource{Values: []string{col}}
		}
		return m
	}
	unknown := ranger.RangerPolicyItemCondition{Type: "ip-range", Values: []string{"10.0.0.0/8"}}
	sp := &ranger.ServicePolicies{ServiceName: "hive", ServiceDef: sd, Policies: []ranger.RangerPolicy{
		{ID: 1, IsEnabled: true, Resources: rs("sales", "*", "*"), PolicyItems: items("select", []string{"ann", "bob"}, []string{"analysts"}),
			AllowExceptions: items("select", []string{"bob"}, nil)},
		{ID: 2, IsEnabled: true, Resources: rs("sales", "orders", ""), DenyPolicyItems: items("select", []string{"eve"}, []string{"temps"}),
			DenyExceptions: items("select", nil, []string{"temps"})},
		{ID: 3, IsEnabled: true, Resources: rs("sales", "orders", "ssn"), DenyPolicyItems: items("select", []string{"ann"}, nil),
			PolicyItems: items("select", []string{"carl"}, nil)},
		{ID: 4, IsEnabled: true, Resources: rs("sales", "orders", "*"), PolicyItems: items("select", []string{"dora"}, nil, unknown),
			DenyPolicyItems: items("update", []string{"frank"}, nil, unknown)},
	}}
	e, err := NewEngine(&ranger.Bundle{Policies: sp}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		access string
		col    string
		want   ResourceAccessInfo
	}{
		{"select", "", ResourceAccessInfo{AllowedUsers: []string{"ann", "carl"}, AllowedGroups: []string{"analysts"}, DeniedUsers: []string{"eve"}, DeniedGroups: []string{}}},
		{"select", "ssn", ResourceAccessInfo{AllowedUsers: []string{"carl"}, AllowedGroups: []string{"analysts"}, DeniedUsers: []string{"ann", "eve"}, DeniedGroups: []string{}}},
		{"update", "ssn", ResourceAccessInfo{AllowedUsers: []string{}, AllowedGroups: []string{}, DeniedUsers: []string{"frank"}, DeniedGroups: []string{}}},
	} {
		req := Request{Resource: map[string][]string{"database": {"sales"}, "table": {"orders"}}, Access: c.access, At: t0}
		if c.col != "" {
			req.Resource["column"] = []string{c.col}
		}
		if got := e.ResourceAccessInfo(req); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: %+v, want %+v", c.access, c.col, got, c.want)
		}
	}
}
