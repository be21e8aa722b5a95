package policy

import "github.com/pgranger/pgranger/ranger"

// Audited reports whether an access decided with these policy ids is
// audited, as a Ranger plugin decides it from the bundle:
//
//   - auditMode "audit-none": never; "audit-all": always;
//   - "audit-default": a denial always (Ranger's default audit filter
//     audits DENIED results); an allowed access when any policy that
//     decided it (access, mask or row filter) has isAuditEnabled, or when
//     no policy was involved at all (a statement that reads nothing
//     governed is pgranger's own record). A policy id the bundle does not
//     hold counts as audited.
func (e *Engine) Audited(denied bool, policyIDs ...[]int64) bool {
	switch e.auditMode {
	case ranger.AuditModeNone:
		return false
	case ranger.AuditModeAll:
		return true
	}
	if denied {
		return true
	}
	any := false
	for _, ids := range policyIDs {
		for _, id := range ids {
			any = true
			if !e.noAudit[id] {
				return true
			}
		}
	}
	return !any
}

// auditDisabled collects the ids of the bundle's policies with
// isAuditEnabled false (resource, tag and security-zone policies).
func auditDisabled(sp *ranger.ServicePolicies) map[int64]bool {
	out := map[int64]bool{}
	add := func(ps []ranger.RangerPolicy) {
		for i := range ps {
			if !ps[i].IsAuditEnabled {
				out[ps[i].ID] = true
			}
		}
	}
	add(sp.Policies)
	if sp.TagPolicies != nil {
		add(sp.TagPolicies.Policies)
	}
	for _, z := range sp.SecurityZones {
		add(z.Policies)
	}
	return out
}
