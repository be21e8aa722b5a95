package policy

import (
	"testing"

	"github.com/pgranger/pgranger/ranger"
)

func TestAudited(t *testing.T) {
	bundle := func(mode string) *ranger.Bundle {
		return &ranger.Bundle{Policies: &ranger.ServicePolicies{ServiceName: "hive", AuditMode: mode, Policies: []ranger.RangerPolicy{
			{ID: 1, IsEnabled: true, IsAuditEnabled: true, Resources: map[string]ranger.RangerPolicyResource{"database": {Values: []string{"a"}}, "table": {Values: []string{"*"}}, "column": {Values: []string{"*"}}}},
			{ID: 2, IsEnabled: true, IsAuditEnabled: false, Resources: map[string]ranger.RangerPolicyResource{"database": {Values: []string{"b"}}, "table": {Values: []string{"*"}}, "column": {Values: []string{"*"}}}},
		}}}
	}
	for _, c := range []struct {
		mode   string
		denied bool
		ids    [][]int64
		want   bool
	}{
		{"", false, [][]int64{{1}}, true},
		{"", false, [][]int64{{2}}, false},
		{"", false, [][]int64{{2}, {1}}, true},
		{"", false, [][]int64{{2}, nil}, false},
		{"", false, nil, true},
		{"", true, [][]int64{{2}}, true},
		{"", false, [][]int64{{99}}, true},
		{ranger.AuditModeAll, false, [][]int64{{2}}, true},
		{ranger.AuditModeNone, true, [][]int64{{1}}, false},
		{ranger.AuditModeNone, false, nil, false},
	} {
		e, err := NewEngine(bundle(c.mode), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.audited(c.denied, c.ids...); got != c.want {
			t.Errorf("mode %q denied %v ids %v: %v, want %v", c.mode, c.denied, c.ids, got, c.want)
		}
	}
}
