package ranger

import "sort"

// Policy delta change types (RangerPolicyDelta.CHANGE_TYPE_POLICY_*).
const (
	DeltaPolicyCreate = 0
	DeltaPolicyUpdate = 1
	DeltaPolicyDelete = 2
)

// ApplyPolicyDeltas applies policy deltas to a policy list as Ranger's
// RangerPolicyDeltaUtil.applyDeltas does: a delta whose policy is of
// another service type, has no policy, or has a change type other than
// create, update or delete is ignored; otherwise the policy of that id is
// removed and, unless the delta deletes it, replaced by the delta's. The
// result is sorted by policy id. The input is not modified.
func ApplyPolicyDeltas(policies []RangerPolicy, deltas []RangerPolicyDelta, serviceType string) []RangerPolicy {
	if len(deltas) == 0 {
		return policies
	}
	byID := make(map[int64]RangerPolicy, len(policies))
	for _, p := range policies {
		byID[p.ID] = p
	}
	for _, d := range deltas {
		if d.Policy == nil || d.Policy.ServiceType != serviceType {
			continue
		}
		switch d.ChangeType {
		case DeltaPolicyCreate, DeltaPolicyUpdate, DeltaPolicyDelete:
		default:
			continue
		}
		delete(byID, d.Policy.ID)
		if d.ChangeType != DeltaPolicyDelete {
			byID[d.Policy.ID] = *d.Policy
		}
	}
	out := make([]RangerPolicy, 0, len(byID))
	for _, p := range byID {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
