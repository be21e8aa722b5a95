package policy

import (
	"math"
	"strings"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// cpolicy is a policy prepared for evaluation
// (RangerOptimizedPolicyEvaluator).
type cpolicy struct {
	src      *ranger.RangerPolicy
	id       int64
	name     string
	ptype    int
	priority int
	hasDeny  bool // deny items or isDenyAllElse: evaluated first within a priority
	// hasNobodyItem: an item of some kind names no user, group or role
	// (access.go, subjectMatchable)
	hasNobodyItem bool
	denyAllElse   bool
	evalOrder     int
	ordinal       int32 // position in its policySet

	resources   []*policyResMatcher // main resources, then additionalResources
	conds       []*condition        // policy-level conditions
	schedules   []*schedule
	allow, deny []*citem
	allowEx     []*citem
	denyEx      []*citem
	masks       []*citem
	filters     []*citem
	isTag       bool
}

func compilePolicy(sd *serviceDef, p *ranger.RangerPolicy, componentPrefix string, view *resView) *cpolicy {
	cp := &cpolicy{
		src:         p,
		id:          p.ID,
		name:        p.Name,
		ptype:       p.PolicyType,
		priority:    p.PolicyPriority,
		denyAllElse: p.IsDenyAllElse && p.PolicyType == ranger.PolicyTypeAccess,
	}
	cp.resources = append(cp.resources, newPolicyResMatcher(sd, view, p.Resources))
	for _, ar := range p.AdditionalResources {
		cp.resources = append(cp.resources, newPolicyResMatcher(sd, view, ar))
	}
	cp.conds, _ = compileConditions(sd, p.Conditions)
	for _, vs := range p.ValiditySchedules {
		cp.schedules = append(cp.schedules, newSchedule(vs))
	}
	cp.allow = compileItems(sd, p.PolicyItems, componentPrefix)
	if sd.denyEnabled {
		cp.deny = compileItems(sd, p.DenyPolicyItems, componentPrefix)
		cp.allowEx = compileItems(sd, p.AllowExceptions, componentPrefix)
		cp.denyEx = compileItems(sd, p.DenyExceptions, componentPrefix)
	}
	for i := range p.DataMaskPolicyItems {
		it := &p.DataMaskPolicyItems[i]
		if componentPrefix != "" && prunedTagItem(&it.RangerPolicyItem, componentPrefix) {
			continue
		}
		ci := compileItem(sd, &it.RangerPolicyItem, componentPrefix)
		ci.conds, ci.unknownCond = compileConditions(sd, it.Conditions)
		ci.maskInfo = it.DataMaskInfo
		cp.masks = append(cp.masks, ci)
	}
	for i := range p.RowFilterPolicyItems {
		it := &p.RowFilterPolicyItems[i]
		if componentPrefix != "" && prunedTagItem(&it.RangerPolicyItem, componentPrefix) {
			continue
		}
		ci := compileItem(sd, &it.RangerPolicyItem, componentPrefix)
		ci.conds, ci.unknownCond = compileConditions(sd, it.Conditions)
		if it.RowFilterInfo != nil && strings.TrimSpace(it.RowFilterInfo.FilterExpr) != "" {
			ci.filterExpr, ci.hasFilter = it.RowFilterInfo.FilterExpr, true
		}
		cp.filters = append(cp.filters, ci)
	}
	cp.hasDeny = cp.denyAllElse || len(cp.deny) > 0
	for _, items := range [][]*citem{cp.allow, cp.deny, cp.allowEx, cp.denyEx, cp.masks, cp.filters} {
		for _, it := range items {
			if len(it.users) == 0 && len(it.groups) == 0 && len(it.roles) == 0 {
				cp.hasNobodyItem = true
			}
		}
	}
	cp.evalOrder = computeEvalOrder(sd, p, cp, componentPrefix)
	return cp
}

// pruned is RangerPolicyRepository.isPolicyNeedsPruning for tag policies:
// nothing left after dropping other components' accesses, and not audited.
func (cp *cpolicy) pruned() bool {
	return !cp.src.IsAuditEnabled && len(cp.allow) == 0 && len(cp.deny) == 0 && len(cp.allowEx) == 0 &&
		len(cp.denyEx) == 0 && len(cp.masks) == 0 && len(cp.filters) == 0
}

// applicable is RangerDefaultPolicyEvaluator.isApplicable: without
// validitySchedules always, else when one schedule covers the access time.
func (cp *cpolicy) applicable(at time.Time) bool {
	if len(cp.schedules) == 0 {
		return true
	}
	for _, s := range cp.schedules {
		if s.applicable(at) {
			return true
		}
	}
	return false
}

// byEvalOrder is Ranger's order for access policies
// (RangerPolicyEvaluator.PolicyEvalOrderComparator): priority descending,
// policies that can deny first, then the computed evalOrder, then name.
// Within a priority this is what makes deny beat allow: a deny-capable
// policy is always looked at before an allow-only one can end the walk.
func byEvalOrder(a, b *cpolicy) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if a.hasDeny != b.hasDeny {
		return a.hasDeny
	}
	if a.evalOrder != b.evalOrder {
		return a.evalOrder < b.evalOrder
	}
	return a.name < b.name
}

// byPriorityName orders mask and row-filter policies: priority descending,
// then policy name, then id. Ranger sorts these lists by name too
// (NAME_COMPARATOR) but re-sorts trie lookups by evalOrder, so its order
// among equal priorities is not fully defined; pgranger always uses name
// order.
func byPriorityName(a, b *cpolicy) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if a.name != b.name {
		return a.name < b.name
	}
	return a.id < b.id
}

// computeEvalOrder follows RangerOptimizedPolicyEvaluator.computeEvalOrder.
// It only decides which of several allowing policies is reported, so
// matching Ranger here keeps audit policy ids aligned with Ranger's.
func computeEvalOrder(sd *serviceDef, p *ranger.RangerPolicy, cp *cpolicy, componentPrefix string) int {
	const (
		scoreDefault           = 10000
		maxDiscountResource    = 100
		maxDiscountUsersGroups = 25
		maxDiscountAccessTypes = 25
		maxDiscountConditions  = 25
		discountMatchAny       = 25
		discountHasStar        = 10
		discountHasQuestion    = 5
		discountExcludes       = 5
		discountRecursive      = 5
		conditionPenalty       = 5
		dynamicPenalty         = 20
	)
	order := scoreDefault
	discount := 0
	for name, pr := range p.Resources {
		if len(pr.Values) == 0 || sd.idxOf(name) < 0 {
			continue
		}
		matchAny, star, question := false, false, false
		for _, v := range pr.Values {
			if v == "" || v == "*" {
				matchAny = true
				break
			} else if strings.Contains(v, "*") {
				star = true
			} else if strings.Contains(v, "?") {
				question = true
			}
		}
		if matchAny {
			discount += discountMatchAny
			continue
		}
		if star {
			discount += discountHasStar
		} else if question {
			discount += discountHasQuestion
		}
		if pr.IsExcludes {
			discount += discountExcludes
		}
		if pr.IsRecursive {
			discount += discountRecursive
		}
	}
	for _, pm := range cp.resources {
		if pm.dynamic {
			order += dynamicPenalty
			break
		}
	}
	order -= min(maxDiscountResource, discount)

	users, groups, perms := map[string]bool{}, map[string]bool{}, map[string]bool{}
	hasPublic, hasCurrent := p.IsDenyAllElse, false
	customConds := 0
	countConds := func(cs []ranger.RangerPolicyItemCondition) {
		for _, c := range cs {
			if sd.condDefs[c.Type] != nil {
				customConds++
			}
		}
	}
	countConds(p.Conditions)
	addItem := func(it *ranger.RangerPolicyItem) {
		for _, a := range it.Accesses {
			if a.IsAllowed {
				if n, ok := normalizeAccessName(a.Type, componentPrefix); ok {
					perms[n] = true
				}
			}
		}
		for _, u := range it.Users {
			users[u] = true
			if strings.EqualFold(u, "{USER}") {
				hasCurrent = true
			}
		}
		for _, g := range it.Groups {
			groups[g] = true
			if strings.EqualFold(g, "public") {
				hasPublic = true
			}
		}
		countConds(it.Conditions)
	}
	for _, list := range [][]ranger.RangerPolicyItem{p.PolicyItems, p.DenyPolicyItems, p.AllowExceptions, p.DenyExceptions} {
		for i := range list {
			addItem(&list[i])
		}
	}
	for i := range p.DataMaskPolicyItems {
		addItem(&p.DataMaskPolicyItems[i].RangerPolicyItem)
	}
	for i := range p.RowFilterPolicyItems {
		addItem(&p.RowFilterPolicyItems[i].RangerPolicyItem)
	}
	if hasPublic || hasCurrent {
		order -= maxDiscountUsersGroups
	} else {
		order -= min(len(users)+len(groups), maxDiscountUsersGroups)
	}
	if n := len(sd.accessTypes); n > 0 {
		order -= int(math.Floor(float64(maxDiscountAccessTypes*len(perms))/float64(n) + 0.5))
	}
	if d := maxDiscountConditions - conditionPenalty*customConds; d > 0 {
		order -= d
	}
	return order
}
