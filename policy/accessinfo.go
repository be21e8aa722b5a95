package policy

import "sort"

// ResourceAccessInfo is who may and who may not perform an access on a
// resource according to the policy items (Ranger's
// RangerResourceAccessInfo): the users and groups the items name, not an
// evaluation for any one identity. Roles, conditions and {OWNER} are not
// resolved: an item naming a role contributes nothing, {OWNER} and public
// appear as themselves.
type ResourceAccessInfo struct {
	AllowedUsers, AllowedGroups []string // sorted
	DeniedUsers, DeniedGroups   []string // sorted
}

// ResourceAccessInfo answers Ranger's getResourceAccessInfo for req
// (resource and access type; "" or "_any" means any access): every access
// policy whose resources match the request at any level (itself, above or
// below it) and every tag policy for the resource's tags contributes the
// users and groups of its allow items for the access, less those of its
// allow exceptions; policies matching at or above the resource contribute
// their deny items, less deny exceptions. Whoever is denied is then not
// listed as allowed. An item whose conditions pgranger cannot evaluate
// counts as a deny and not as an allow, the fail-closed rule.
func (e *Engine) ResourceAccessInfo(req Request) ResourceAccessInfo {
	rq := e.prepareRequest(nil, req.Access, &req)
	acc := &accessInfo{allowU: map[string]bool{}, allowG: map[string]bool{}, denyU: map[string]bool{}, denyG: map[string]bool{}}
	for _, r := range e.reposFor(rq) {
		if set := r.tagAccess; set != nil {
			for _, t := range rq.tags {
				trq := e.tagRequest(rq, t)
				for _, ord := range set.index.candidates(trq.res) {
					p := set.policies[ord]
					if tagPolicyMatches(trq, p) {
						acc.add(p, trq, t.mt)
					}
				}
			}
		}
		for _, ord := range r.access.index.candidates(rq.res) {
			p := r.access.policies[ord]
			for _, pm := range p.resources {
				if mt, _ := pm.matchType(rq.res, &rq.tc); mt != mtNone {
					acc.add(p, rq, mt)
				}
			}
		}
	}
	for u := range acc.denyU {
		delete(acc.allowU, u)
	}
	for g := range acc.denyG {
		delete(acc.allowG, g)
	}
	return ResourceAccessInfo{AllowedUsers: sorted(acc.allowU), AllowedGroups: sorted(acc.allowG),
		DeniedUsers: sorted(acc.denyU), DeniedGroups: sorted(acc.denyG)}
}

type accessInfo struct {
	allowU, allowG, denyU, denyG map[string]bool
}

// add is RangerDefaultPolicyEvaluator.getResourceAccessInfo for one
// matching resource of p.
func (a *accessInfo) add(p *cpolicy, rq *evalReq, mt matchType) {
	if len(p.allow) > 0 {
		u, g := itemsNaming(p.allow, rq, kindAllow)
		if len(p.allowEx) > 0 {
			xu, xg := itemsNaming(p.allowEx, rq, kindAllowException)
			remove(u, xu)
			remove(g, xg)
		}
		merge(a.allowU, u)
		merge(a.allowG, g)
	}
	if mt != mtDescendant && len(p.deny) > 0 {
		u, g := itemsNaming(p.deny, rq, kindDeny)
		if len(p.denyEx) > 0 {
			xu, xg := itemsNaming(p.denyEx, rq, kindDenyException)
			remove(u, xu)
			remove(g, xg)
		}
		merge(a.denyU, u)
		merge(a.denyG, g)
	}
}

// itemsNaming collects the users and groups of the items that grant the
// request's access (any access for `_any`) and whose conditions hold.
func itemsNaming(items []*citem, rq *evalReq, kind itemKind) (users, groups map[string]bool) {
	users, groups = map[string]bool{}, map[string]bool{}
	for _, it := range items {
		if rq.isAny && len(it.accesses) == 0 || !rq.isAny && !it.matchesAccess(rq.access) {
			continue
		}
		switch evalConditions(it.conds, rq) {
		case condFalse:
			continue
		case condUnknown:
			if !kind.restrictive() {
				continue
			}
		}
		for _, u := range it.users {
			users[u] = true
		}
		for _, g := range it.groups {
			groups[g] = true
		}
	}
	return users, groups
}

func remove(m, x map[string]bool) {
	for k := range x {
		delete(m, k)
	}
}

func merge(m, x map[string]bool) {
	for k := range x {
		m[k] = true
	}
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
