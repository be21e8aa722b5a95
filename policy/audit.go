package policy

import (
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// audited reports whether an access decided with these policy ids is
// audited, as a Ranger plugin decides it from the bundle:
//
//   - auditMode "audit-none": never; "audit-all": always;
//   - "audit-default": a denial always (Ranger's default audit filter
//     audits DENIED results); an allowed access when any policy that
//     decided it (access, mask or row filter) has isAuditEnabled, or when
//     no policy was involved at all (a statement that reads nothing
//     governed is pgranger's own record). A policy id the bundle does not
//     hold counts as audited.
func (e *Engine) audited(denied bool, policyIDs ...[]int64) bool {
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

// auditedAccess is audited for a proxy record of q.Decided, with the bundle's audit
// exclusions (serviceConfig ranger.plugin.audit.exclude.users|groups|roles)
// and audit filters (ranger.plugin.audit.filters, of the service and of its
// tag service) applied as a Ranger plugin applies them:
//
//   - without filters, Audited decides, except that an excluded user's
//     allowed access is not audited (a denial is, as Ranger's default
//     filter audits denials);
//   - with filters, the audit mode, the exclusions and the deciding
//     policies' isAuditEnabled give a first answer (a denial no policy
//     decided is then not audited), and the first filter that matches the
//     request and carries isAudited replaces it. With columns, each column
//     is a request; the record is written if any of them is audited.
func (e *Engine) auditedAccess(q *Request) bool {
	if len(e.auditFilters) == 0 && len(e.tagAuditFilters) == 0 {
		if !q.Decided.Denied && !e.auditExclude.empty() && e.auditExcluded(e.newEvalReq(q.Subject, q.Access, time.Time{})) {
			return false
		}
		return e.audited(q.Decided.Denied, q.Decided.PolicyIDs...)
	}
	base := e.filteredBase(q)
	if !e.filterCanDecide(!q.Decided.Denied) {
		// No filter decides for this result (the usual single
		// {accessResult: DENIED} filter and an allowed access): the
		// first answer stands, without building requests.
		return base && (e.auditExclude.empty() || !e.auditExcluded(e.newEvalReq(q.Subject, q.Access, time.Time{})))
	}
	at := q.At
	if at.IsZero() {
		at = time.Now()
	}
	cols := q.Decided.Columns
	if len(cols) == 0 {
		cols = []string{""}
	}
	for _, c := range cols {
		r := q.Hive
		r.Column = c
		rq := e.prepare(q.Subject, q.Access, at, e.hiveResource(r), nil, false)
		audited, ok := e.filterAudit(&auditRun{rq: rq, action: q.Action, allowed: !q.Decided.Denied})
		if !ok {
			audited = base && !e.auditExcluded(rq)
		}
		if audited {
			return true
		}
	}
	return false
}

// filteredBase is the audit decision before the filters when filters are
// configured: the audit mode, then the deciding policies' isAuditEnabled.
func (e *Engine) filteredBase(q *Request) bool {
	switch e.auditMode {
	case ranger.AuditModeNone:
		return false
	case ranger.AuditModeAll:
		return true
	}
	if e.noPolicies {
		return true
	}
	any := false
	for _, ids := range q.Decided.PolicyIDs {
		for _, id := range ids {
			if id <= 0 {
				continue // no policy (0) or a super user (-1)
			}
			any = true
			if !e.noAudit[id] {
				return true
			}
		}
	}
	return !any && !q.Decided.Denied
}

// filterCanDecide reports whether some audit filter with isAudited can
// match an access with this result.
func (e *Engine) filterCanDecide(allowed bool) bool {
	for _, fs := range [][]*auditFilter{e.auditFilters, e.tagAuditFilters} {
		for _, f := range fs {
			if f.isAudited == nil {
				continue
			}
			switch f.result {
			case anyResult:
				return true
			case deniedResult:
				if !allowed {
					return true
				}
			case allowedResult:
				if allowed {
					return true
				}
			}
		}
	}
	return false
}
