package policy

import (
	"strings"

	"github.com/pgranger/pgranger/ranger"
)

// itemKind says what matching an item does, which decides how an item
// condition pgranger cannot evaluate is treated (see conditions.go).
type itemKind int

const (
	kindAllow itemKind = iota
	kindDeny
	kindAllowException
	kindDenyException
	kindMask
	kindRowFilter
)

// restrictive items are those whose matching can only take access away; a
// condition that cannot be evaluated makes them match (fail closed).
func (k itemKind) restrictive() bool { return k == kindDeny || k == kindAllowException }

// citem is a policy item prepared for matching
// (RangerDefaultPolicyItemEvaluator).
type citem struct {
	users          []string
	hasCurrentUser bool // {USER}
	hasOwner       bool // {OWNER}
	groups         []string
	hasPublic      bool
	roles          []string
	accesses       []string // allowed access types after implied grants, lower-case
	delegateAdmin  bool
	conds          []*condition
	unknownCond    bool // some condition pgranger does not implement

	maskInfo   *ranger.RangerPolicyItemDataMaskInfo
	filterExpr string
	hasFilter  bool
}

func compileItem(sd *serviceDef, it *ranger.RangerPolicyItem, componentPrefix string) *citem {
	ci := &citem{delegateAdmin: it.DelegateAdmin}
	for _, u := range it.Users {
		switch u {
		case "{USER}":
			ci.hasCurrentUser = true
		case "{OWNER}":
			ci.hasOwner = true
		}
		ci.users = append(ci.users, u)
	}
	for _, g := range it.Groups {
		if g == "public" {
			ci.hasPublic = true
		}
		ci.groups = append(ci.groups, g)
	}
	ci.roles = append(ci.roles, it.Roles...)

	// Implied grants are expanded one level and inherit isAllowed of the
	// access that implies them (RangerDefaultPolicyEvaluator.preprocessPolicyItems).
	allowed := map[string]bool{}
	var order []string
	put := func(name string, ok bool) {
		if prev, seen := allowed[name]; seen {
			if !prev && ok {
				allowed[name] = true
			}
			return
		}
		allowed[name] = ok
		order = append(order, name)
	}
	for _, a := range it.Accesses {
		name, ok := normalizeAccessName(a.Type, componentPrefix)
		if !ok {
			continue
		}
		put(name, a.IsAllowed)
	}
	base := append([]string(nil), order...)
	for _, name := range base {
		for _, g := range sd.implied[name] {
			put(g, allowed[name])
		}
	}
	for _, name := range order {
		if allowed[name] {
			ci.accesses = append(ci.accesses, name)
		}
	}
	return ci
}

// matchesSubject is matchUserGroupAndOwner: the user is listed (or {USER}),
// a group is listed (or public), a role is held, or {OWNER} is the owner.
func (ci *citem) matchesSubject(rq *evalReq) bool {
	if ci.hasCurrentUser {
		return true
	}
	for _, u := range ci.users {
		if u == rq.user {
			return true
		}
	}
	if ci.hasPublic {
		return true
	}
	for _, g := range ci.groups {
		for _, rg := range rq.groups {
			if g == rg {
				return true
			}
		}
	}
	if len(ci.roles) > 0 {
		for _, r := range ci.roles {
			if rq.hasRole(r) {
				return true
			}
		}
	}
	if ci.hasOwner && rq.res.owner != "" && rq.user == rq.res.owner {
		return true
	}
	return false
}

func (ci *citem) matchesAccess(access string) bool {
	for _, a := range ci.accesses {
		if a == access {
			return true
		}
	}
	return false
}

// matches is RangerDefaultPolicyItemEvaluator.isMatch for one access type,
// with pgranger's fail-closed rule for conditions it cannot evaluate: such
// an item matches when matching can only restrict (deny, allow exception)
// and never otherwise. policyUnknown carries the same doubt from a
// policy-level condition or an unevaluable resource value.
func (ci *citem) matches(rq *evalReq, access string, kind itemKind, policyUnknown bool) bool {
	if !ci.matchesSubject(rq) || !ci.matchesAccess(access) {
		return false
	}
	switch evalConditions(ci.conds, rq) {
	case condFalse:
		return false
	case condUnknown:
		return kind.restrictive()
	}
	if policyUnknown {
		return kind.restrictive()
	}
	return true
}

func compileItems(sd *serviceDef, items []ranger.RangerPolicyItem, componentPrefix string) []*citem {
	var out []*citem
	for i := range items {
		it := &items[i]
		if componentPrefix != "" && prunedTagItem(it, componentPrefix) {
			continue
		}
		ci := compileItem(sd, it, componentPrefix)
		ci.conds, ci.unknownCond = compileConditions(sd, it.Conditions)
		out = append(out, ci)
	}
	return out
}

// prunedTagItem is RangerPolicyRepository.normalizeAndPrunePolicyItems for
// tag policies: an item whose accesses all belong to other components is
// dropped unless it is a delegate-admin item.
func prunedTagItem(it *ranger.RangerPolicyItem, componentPrefix string) bool {
	if len(it.Accesses) == 0 {
		return false
	}
	for _, a := range it.Accesses {
		if strings.HasPrefix(a.Type, componentPrefix) || !strings.Contains(a.Type, ":") {
			return false
		}
	}
	return !it.DelegateAdmin
}
