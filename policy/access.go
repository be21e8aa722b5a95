package policy

import (
	"fmt"
	"sort"
)

// accResult is Ranger's RangerAccessResult reduced to what access decisions
// need. determined ends the walk over policies.
type accResult struct {
	allowed    bool
	determined bool
	policyID   int64
	priority   int
	reason     string
}

// anyState keeps the result per access type across all policies evaluated
// so far, tag policies and then resource policies (RangerAccessRequestUtil's
// accessTypeResults, which lives in the request's context): after each
// policy, the request's result is what these say. A request for one
// access type has one slot; for `_any` there is one per access type, and
// `_any` is allowed when some access type is, denied only when every one
// is.
type anyState struct {
	results []*accResult
}

// evalAccess follows RangerPolicyEngineImpl.evaluatePoliciesForOneAccessTypeNoAudit:
//  1. super users are allowed (id -1); the pseudo access "_super_user"
//     asks only that;
//  2. tag policies, for each tag of the resource; the first determined
//     result wins;
//  3. resource policies in evaluation order (byEvalOrder). A tag deny
//     leaves room only for strictly higher-priority resource policies, a tag
//     allow for higher or equal ones. A deny is final; an allow is final once
//     no deny-capable policy of its priority is left; a decision locks out
//     every lower priority, so OVERRIDE beats NORMAL either way;
//  4. no decision means deny.
func (e *Engine) evalAccess(rq *evalReq) Decision {
	super := e.IsSuperUser(rq.subj)
	if super {
		return Decision{Allowed: true, PolicyID: -1, Reason: "super user"}
	}
	if rq.access == "_super_user" {
		return Decision{Allowed: false, PolicyID: -1, Reason: "not a super user"}
	}
	var d Decision
	for _, r := range e.reposFor(rq) {
		if d = e.evalAccessRepo(rq, r); d.Allowed {
			return d
		}
	}
	if rq.isAny && rq.res.nkeys == 0 && len(e.zones) > 0 {
		// "show databases": any zone allowing anything allows.
		for _, r := range e.allZoneRepos() {
			if zd := e.evalAccessRepo(rq, r); zd.Allowed {
				return zd
			}
		}
	}
	return d
}

func (e *Engine) evalAccessRepo(rq *evalReq, r *repo) Decision {
	res := &accResult{}
	ats := &anyState{results: make([]*accResult, 1)}
	if rq.isAny {
		ats.results = make([]*accResult, len(e.sd.accessTypes))
	}

	e.evalTagAccess(rq, r.tagAccess, res, ats)
	if res.allowed {
		res.determined = true
	}
	allowedByTags := res.determined && res.allowed
	deniedByTags := res.determined && !res.allowed
	res.determined = false

	for _, ord := range r.access.index.candidates(rq.res) {
		p := r.access.policies[ord]
		// Only the policies Ranger's tries return: one that does not
		// match but is walked can still end the walk below.
		if !p.trieCandidate(rq.res) || !p.applicable(rq.at) {
			continue
		}
		if deniedByTags {
			if res.priority >= p.priority {
				res.determined = true
			}
		} else if res.allowed && res.priority > p.priority {
			res.determined = true
		}
		if res.determined {
			break
		}
		e.evalAccessPolicy(p, rq, res, ats, false)
		if res.allowed && !p.hasDeny {
			res.determined = true
		}
		if res.determined {
			break
		}
	}
	if !res.determined {
		if deniedByTags {
			res.allowed = false
		} else if allowedByTags {
			res.allowed = true
		}
	}
	if res.allowed || res.policyID != 0 {
		return Decision{Allowed: res.allowed, PolicyID: res.policyID, Reason: res.reason}
	}
	what := rq.access
	if rq.isAny {
		what = "any access"
	}
	return Decision{Allowed: false, PolicyID: 0, Reason: noPolicyGrants(what)}
}

type tagCandidate struct {
	p   *cpolicy
	tag *reqTag
}

// evalTagAccess is RangerPolicyEngineImpl.evaluateTagPolicies.
func (e *Engine) evalTagAccess(rq *evalReq, set *policySet, res *accResult, ats *anyState) {
	if set == nil || len(rq.tags) == 0 {
		return
	}
	var cands []tagCandidate
	reqs := map[*reqTag]*evalReq{}
	for _, t := range rq.tags {
		trq := e.tagRequest(rq, t)
		reqs[t] = trq
		for _, ord := range set.index.candidates(trq.res) {
			p := set.policies[ord]
			if p.applicable(rq.at) && tagPolicyMatches(trq, p) {
				cands = append(cands, tagCandidate{p, t})
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].p.ordinal != cands[j].p.ordinal {
			return cands[i].p.ordinal < cands[j].p.ordinal
		}
		return cands[i].tag.order < cands[j].tag.order
	})
	for _, c := range cands {
		tr := &accResult{allowed: res.allowed, determined: res.determined, policyID: res.policyID, priority: res.priority, reason: res.reason}
		e.evalAccessPolicy(c.p, reqs[c.tag], tr, ats, true)
		if tr.allowed && !c.p.hasDeny {
			tr.determined = true
		}
		if !res.determined {
			if tr.determined || (!res.allowed && tr.allowed) {
				*res = *tr
			}
		}
		if res.determined {
			return
		}
	}
}

// evalAccessPolicy is RangerDefaultPolicyEvaluator.evaluate for one access
// policy. For a tag policy the match type is the tag's.
func (e *Engine) evalAccessPolicy(p *cpolicy, rq *evalReq, res *accResult, ats *anyState, isTag bool) {
	if isTag {
		if !scopeAccepts(rq.curTag.mt, rq.descScope, true) {
			return
		}
		e.evalAccessItems(p, rq, rq.curTag.mt, false, res, ats)
		return
	}
	for _, pm := range p.resources {
		if res.determined {
			return
		}
		mt, unknown := pm.matchType(rq.res, &rq.tc)
		if !scopeAccepts(mt, rq.descScope, false) {
			continue
		}
		e.evalAccessItems(p, rq, mt, unknown, res, ats)
	}
}

func (e *Engine) evalAccessItems(p *cpolicy, rq *evalReq, mt matchType, unknown bool, res *accResult, ats *anyState) {
	switch evalConditions(p.conds, rq) {
	case condFalse:
		return
	case condUnknown:
		unknown = true
	}
	if res.determined || !p.subjectMatchable(rq) {
		return
	}
	if !rq.isAny {
		// One access type: its verdict merged into its slot, and the
		// request's result is the slot.
		v, why := p.decide(rq, rq.access, mt, unknown)
		if v == 0 {
			return
		}
		one := &accResult{}
		applyVerdict(one, p, v, why, rq.curTag)
		ats.results[0] = mergeTypeResult(ats.results[0], one, p, v, false)
		*res = *ats.results[0]
		return
	}
	// `_any`: one verdict per access type of the service-def, merged with
	// the earlier policies' (RangerDefaultPolicyEvaluator.evaluatePolicyItems).
	for i, at := range e.sd.accessTypes {
		v, why := p.decide(rq, at, mt, unknown)
		if v == 0 {
			continue
		}
		one := &accResult{}
		applyVerdict(one, p, v, why, rq.curTag)
		ats.results[i] = mergeTypeResult(ats.results[i], one, p, v, true)
		// One allowed type settles `_any`, or with descendant denies
		// counted, one denied type (Ranger stops the walk there too).
		if v > 0 && !rq.descDeny || v < 0 && rq.descDeny {
			break
		}
	}
	if c := ats.composite(rq.descDeny); c != nil {
		*res = *c
	}
}

// mergeTypeResult is how RangerDefaultPolicyEvaluator.evaluatePolicyItems
// merges a policy's verdict v (one, from policy p) for an access type into
// the result the earlier policies left for it (old): the first verdict
// lands; over an allow, a deny of the same or a higher priority lands, an
// allow only of a higher one (so an OVERRIDE allow is not undone by a
// NORMAL deny of a later tag policy, and a later OVERRIDE allow reports
// itself over a NORMAL one); over a deny, a deny of a higher priority
// lands, and for `_any` an allow of the same or a higher one.
func mergeTypeResult(old, one *accResult, p *cpolicy, v int, isAny bool) *accResult {
	switch {
	case old == nil:
		return one
	case old.allowed:
		if v < 0 && p.priority >= old.priority || v > 0 && p.priority > old.priority {
			return one
		}
	default:
		if v > 0 && isAny && p.priority >= old.priority || v < 0 && p.priority > old.priority {
			return one
		}
	}
	return old
}

// composite is deriveAccessResultFromGroup over all access types: an allowed
// type allows `_any`; only if every type is denied is `_any` denied. With
// descendant denies counted (each access type its own group in Ranger's
// getCompositeAccessResult) it is the other way round: a denied type
// denies, and only if every type is allowed is `_any` allowed.
func (a *anyState) composite(descDeny bool) *accResult {
	if descDeny {
		for _, r := range a.results {
			if r != nil && !r.allowed {
				return r
			}
		}
		for _, r := range a.results {
			if r == nil {
				return nil
			}
		}
		if len(a.results) == 0 {
			return nil
		}
		return a.results[0]
	}
	var denied *accResult
	for _, r := range a.results {
		if r == nil {
			return a.firstAllowed()
		}
		if r.allowed {
			return r
		}
		if denied == nil {
			denied = r
		}
	}
	return denied
}

func (a *anyState) firstAllowed() *accResult {
	for _, r := range a.results {
		if r != nil && r.allowed {
			return r
		}
	}
	return nil
}

// decide evaluates the items of one policy for one access type
// (getMatchingPolicyItemForAccessPolicyForSpecificAccess): the first
// matching deny item not cancelled by a deny exception denies; otherwise
// the first matching allow item not cancelled by an allow exception allows;
// otherwise isDenyAllElse denies. A deny reached through a DESCENDANT match
// (`_any` on a parent of the policy's resource) is ignored, as Ranger's
// ignoreDescendantDeny default does, unless the request asks otherwise
// (Request.DescendantDeny).
func (p *cpolicy) decide(rq *evalReq, access string, mt matchType, unknown bool) (int, string) {
	if matchAny(p.deny, rq, access, kindDeny, unknown) && !matchAny(p.denyEx, rq, access, kindDenyException, unknown) {
		if mt == mtDescendant && !rq.descDeny {
			return 0, ""
		}
		return -1, "denied by"
	}
	if matchAny(p.allow, rq, access, kindAllow, unknown) && !matchAny(p.allowEx, rq, access, kindAllowException, unknown) {
		return 1, "allowed by"
	}
	if p.denyAllElse {
		if mt == mtDescendant && !rq.descDeny {
			return 0, ""
		}
		return -1, "denied (deny-all-else) by"
	}
	return 0, ""
}

func matchAny(items []*citem, rq *evalReq, access string, kind itemKind, unknown bool) bool {
	for _, it := range items {
		if it.matches(rq, access, kind, unknown) {
			return true
		}
	}
	return false
}

// applyVerdict is RangerDefaultPolicyEvaluator.updateAccessResult: a deny
// always lands and determines; an allow lands only if nothing allowed yet.
func applyVerdict(res *accResult, p *cpolicy, v int, why string, tag *reqTag) {
	if v == 0 {
		return
	}
	reason := fmt.Sprintf("%s policy %d", why, p.id)
	if tag != nil {
		reason = fmt.Sprintf("%s tag policy %d (tag %s)", why, p.id, tag.typ)
	}
	if v < 0 {
		*res = accResult{allowed: false, determined: true, policyID: p.id, priority: p.priority, reason: reason}
		return
	}
	if !res.allowed {
		res.allowed, res.policyID, res.priority, res.reason = true, p.id, p.priority, reason
	}
}

// subjectMatchable is the subject half of RangerOptimizedPolicyEvaluator.
// hasMatchablePolicyItem, which decides whether Ranger evaluates a
// policy's items at all. For `_any` that matters beyond the verdicts:
// evaluating them also re-reads the request's result from the per-type
// results, so a policy walked without evaluating its items leaves the
// reported policy as it was. Ranger answers yes while some item of the
// policy has not computed its implied grants, which an item does the
// first time a request's subject matches it: an item naming nobody never
// does, an item naming a user does once that user has asked. pgranger
// answers as Ranger does once every named subject has asked, which is
// where a long-running plugin settles (docs/policy-semantics.md,
// "Differences the decision differential accepts", any-walk-history): yes for a policy with an item naming nobody, or
// denying all else; else yes when some item names the user, one of the
// groups or roles, public, {USER}, or {OWNER} for the owner.
func (p *cpolicy) subjectMatchable(rq *evalReq) bool {
	if p.denyAllElse || p.hasNobodyItem {
		return true
	}
	for _, items := range [][]*citem{p.allow, p.deny, p.allowEx, p.denyEx, p.masks, p.filters} {
		for _, it := range items {
			if it.matchesSubject(rq) {
				return true
			}
		}
	}
	return false
}
