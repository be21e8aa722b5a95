package ranger

import (
	"reflect"
	"testing"
)

func TestApplyPolicyDeltas(t *testing.T) {
	ps := []RangerPolicy{{ID: 3, Name: "c"}, {ID: 1, Name: "a"}, {ID: 2, Name: "b"}}
	got := ApplyPolicyDeltas(ps, []RangerPolicyDelta{
		{ChangeType: DeltaPolicyDelete, Policy: &RangerPolicy{ID: 2, ServiceType: "hive"}},
		{ChangeType: DeltaPolicyUpdate, Policy: &RangerPolicy{ID: 3, Name: "c2", ServiceType: "hive"}},
		{ChangeType: DeltaPolicyCreate, Policy: &RangerPolicy{ID: 9, Name: "new", ServiceType: "hive"}},
		{ChangeType: DeltaPolicyDelete, Policy: &RangerPolicy{ID: 1, ServiceType: "tag"}}, // another service type
		{ChangeType: 4, Policy: &RangerPolicy{ID: 1, ServiceType: "hive"}},                // not a policy change
		{ChangeType: DeltaPolicyDelete}, // no policy
	}, "hive")
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	if !reflect.DeepEqual(names, []string{"a", "c2", "new"}) {
		t.Errorf("got %v", names)
	}
	if ps[0].Name != "c" || len(ps) != 3 {
		t.Error("the input was modified")
	}
}
