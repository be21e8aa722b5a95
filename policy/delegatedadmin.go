package policy

import (
	"sort"
	"strings"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// AdminDecision says whether a subject may administer accesses on a
// resource: grant and revoke them, and write the policies that govern them
// (Ranger's delegated admin).
type AdminDecision struct {
	Allowed   bool
	SuperUser bool
	// PolicyIDs are the policies whose delegate-admin items gave the
	// accesses, in the order found.
	PolicyIDs []int64
	// Missing are the accesses no delegate-admin item gives (sorted);
	// empty when Allowed.
	Missing []string
}

// delegatedAdmin decides, as Ranger Admin does before a grant, a revoke or
// a policy write by someone who is not an admin
// (RangerPolicyAdminImpl.isDelegatedAdminAccessAllowed), whether s may
// administer every one of accesses on r: a super user may; anyone else
// needs, for each access, an allow item with delegateAdmin that names
// the subject (user, group, public, role) and gives the access (implied
// grants included: "all" gives every access), in an enabled access
// policy in force at at whose resources match r — a policy on
// sales/*/* matches sales/orders/* — and not cancelled in that policy by
// an allow exception or a deny item for the subject. r's values are taken
// as they are: a table-level grant asks about column "*", which only a
// policy on every column matches.
//
// Conditions pgranger cannot evaluate never give admin rights (fail
// closed), nor do tag policies: Ranger decides delegated admin on
// resource policies only.
func (e *Engine) delegatedAdmin(s *Subject, r Resource, accesses []string, at time.Time) AdminDecision {
	if e.IsSuperUser(s) {
		return AdminDecision{Allowed: true, SuperUser: true}
	}
	missing := map[string]bool{}
	for _, a := range accesses {
		missing[strings.ToLower(strings.TrimSpace(a))] = true
	}
	if len(missing) == 0 {
		return AdminDecision{}
	}
	// A request for one access type (any: only the resource and subject
	// matter for the walk) without descendant matches.
	rq := e.prepareScoped(s, "select", at, e.hiveResource(r), nil, false, func(rq *evalReq) { rq.descScope = false })
	var d AdminDecision
	for _, rp := range e.reposFor(rq) {
		for _, ord := range rp.access.index.candidates(rq.res) {
			p := rp.access.policies[ord]
			if len(missing) == 0 {
				break
			}
			if !p.applicable(at) || evalConditions(p.conds, rq) != condTrue {
				continue
			}
			if !p.matchesSelf(rq) {
				continue
			}
			gave := false
			for a := range missing {
				if matchAny(p.deny, rq, a, kindDeny, false) && !matchAny(p.denyEx, rq, a, kindDenyException, false) {
					continue
				}
				if matchAny(p.allowEx, rq, a, kindAllowException, false) {
					continue
				}
				for _, it := range p.allow {
					if it.delegateAdmin && it.matches(rq, a, kindAllow, false) {
						delete(missing, a)
						gave = true
						break
					}
				}
			}
			if gave {
				d.PolicyIDs = append(d.PolicyIDs, p.id)
			}
		}
	}
	for a := range missing {
		d.Missing = append(d.Missing, a)
	}
	sort.Strings(d.Missing)
	d.Allowed = len(d.Missing) == 0
	return d
}

// matchesSelf reports whether one of the policy's resource sets matches
// the requested resource itself (not only an ancestor or descendant of it),
// with every value evaluable.
func (p *cpolicy) matchesSelf(rq *evalReq) bool {
	for _, pm := range p.resources {
		mt, unknown := pm.matchType(rq.res, &rq.tc)
		if !unknown && scopeAccepts(mt, false, false) {
			return true
		}
	}
	return false
}

// PolicyValidityEnd is when a policy stops applying for good: the latest
// end of its validity schedules. ok is false when the policy has no
// schedule, or a schedule without an end (it applies indefinitely).
func PolicyValidityEnd(p *ranger.RangerPolicy) (end time.Time, ok bool) {
	if len(p.ValiditySchedules) == 0 {
		return time.Time{}, false
	}
	for _, vs := range p.ValiditySchedules {
		e, has := ValidityEnd(vs)
		if !has {
			return time.Time{}, false
		}
		if e.After(end) {
			end = e
		}
	}
	return end, true
}
