package policy

import (
	"github.com/pgranger/pgranger/ranger"
)

// matchType is Ranger's RangerPolicyResourceMatcher.MatchType: how a policy's
// resource relates to the requested one.
type matchType int

const (
	mtNone       matchType = iota
	mtSelf                 // same level
	mtDescendant           // the policy is deeper and not all '*' below the request
	mtAncestor             // the request is deeper than the policy
	mtSelfAndAllDescendants
)

func (m matchType) String() string {
	switch m {
	case mtSelf:
		return "SELF"
	case mtDescendant:
		return "DESCENDANT"
	case mtAncestor:
		return "ANCESTOR"
	case mtSelfAndAllDescendants:
		return "SELF_AND_ALL_DESCENDANTS"
	}
	return "NONE"
}

// parseMatchType reads the names Ranger uses in RangerTagForEval.matchType.
func parseMatchType(s string) matchType {
	switch s {
	case "", "SELF":
		return mtSelf
	case "DESCENDANT":
		return mtDescendant
	case "ANCESTOR":
		return mtAncestor
	case "SELF_AND_ALL_DESCENDANTS":
		return mtSelfAndAllDescendants
	}
	return mtNone
}

// scopeAccepts says whether a policy matching with m applies to a request
// (RangerDefaultPolicyEvaluator.evaluate): SELF or SELF_AND_ALL_DESCENDANTS
// always, DESCENDANT for `_any`, ANCESTOR only for tag requests (a tag on a
// table covers its columns).
func scopeAccepts(m matchType, isAny, isTag bool) bool {
	switch m {
	case mtSelf, mtSelfAndAllDescendants:
		return true
	case mtDescendant:
		return isAny
	case mtAncestor:
		return isTag
	}
	return false
}

// reqResource is a requested resource as a vector indexed like
// serviceDef.names. An empty string means the level is not part of the
// request; multi carries a list value (a URL request naming several paths).
type reqResource struct {
	vals   []string
	folded []string
	multi  [][]string
	keys   uint64
	nkeys  int
	owner  string
	// foreign: the request names a resource the service-def does not know,
	// so no hierarchy can hold it and nothing matches (as in Ranger).
	foreign bool
}

func newReqResource(n int) *reqResource {
	return &reqResource{vals: make([]string, n), folded: make([]string, n)}
}

func (r *reqResource) set(i int, v string) {
	if i < 0 || v == "" {
		return
	}
	if r.keys&(1<<uint(i)) == 0 {
		r.nkeys++
	}
	r.keys |= 1 << uint(i)
	r.vals[i] = v
	r.folded[i] = fold(v)
}

func (r *reqResource) setMulti(i int, vs []string) {
	if i < 0 || len(vs) == 0 {
		return
	}
	if len(vs) == 1 {
		r.set(i, vs[0])
		return
	}
	if r.multi == nil {
		r.multi = make([][]string, len(r.vals))
	}
	r.multi[i] = vs
	if r.keys&(1<<uint(i)) == 0 {
		r.nkeys++
	}
	r.keys |= 1 << uint(i)
	r.vals[i] = vs[0]
	r.folded[i] = fold(vs[0])
}

func (r *reqResource) has(i int) bool { return r.keys&(1<<uint(i)) != 0 }

// elemMatcher matches one resource of a policy (RangerDefaultResourceMatcher
// and its path/URL subclasses).
type elemMatcher struct {
	def      *resDef
	values   []*valueMatcher
	matchAny bool
	excludes bool
	dynamic  bool
}

func newElemMatcher(def *resDef, pr ranger.RangerPolicyResource) *elemMatcher {
	em := &elemMatcher{def: def, excludes: pr.IsExcludes}
	for _, v := range pr.Values {
		if v == "" {
			continue
		}
		vm := newValueMatcher(v, &def.opts, pr.IsRecursive)
		if vm.isMatchAny() {
			em.values = nil
			em.matchAny = true
			break
		}
		em.dynamic = em.dynamic || vm.dynamic
		em.values = append(em.values, vm)
	}
	if len(em.values) == 0 {
		em.matchAny = true
	}
	return em
}

// literalKeys returns the index keys of a policy resource that names plain
// values only; ok is false when the resource can match other names
// (wildcards, tokens, excludes, match-any).
func (em *elemMatcher) literalKeys() (keys []string, ok bool) {
	if em.matchAny || em.excludes || em.dynamic {
		return nil, false
	}
	for _, vm := range em.values {
		if !vm.isStaticLiteral() {
			return nil, false
		}
		if vm.fold {
			keys = append(keys, vm.foldedPat)
		} else {
			keys = append(keys, vm.pat)
		}
	}
	return keys, true
}

// match returns whether the element matches the request's value for its
// resource, following RangerDefaultResourceMatcher.getMatchType with the
// SELF scope. "All values" requests (absent, "" or "*") match only a
// match-any policy value, and isExcludes flips the result except for that
// case (applyExcludes).
func (em *elemMatcher) match(r *reqResource, tc *tokenCtx) (matched, unknown bool) {
	i := em.def.idx
	allValues := !r.has(i) || (r.multi == nil || r.multi[i] == nil) && r.vals[i] == "*"
	var res bool
	switch {
	case em.matchAny:
		res = true
	case allValues:
		res = false
	default:
		vals := []string{r.vals[i]}
		if r.multi != nil && r.multi[i] != nil {
			vals = r.multi[i]
		}
	outer:
		for k, v := range vals {
			fv := r.folded[i]
			if k > 0 || len(vals) > 1 {
				fv = fold(v)
			}
			for _, vm := range em.values {
				m, u := vm.match(v, fv, tc)
				if m {
					res = true
					unknown = false
					break outer
				}
				unknown = unknown || u
			}
		}
	}
	if em.excludes && !(allValues && !em.matchAny) {
		res = !res
	}
	return res, unknown
}

// policyResMatcher matches one resource set of a policy (the main one or an
// entry of additionalResources) against requests: Ranger's
// RangerDefaultPolicyResourceMatcher.
type policyResMatcher struct {
	view      *resView
	elems     []*elemMatcher // by resource index; nil when the policy does not name it
	keys      uint64
	nkeys     int
	validHier *hierarchy // the only hierarchy the policy's resources fit, if exactly one
	ownHier   *hierarchy // shortest hierarchy holding the policy's resources
	ok        bool       // Ranger's isInitialized
	dynamic   bool
	trie      []*trieKey // how Ranger's resource tries hold the set (trie.go)
}

func newPolicyResMatcher(sd *serviceDef, view *resView, res map[string]ranger.RangerPolicyResource) *policyResMatcher {
	pm := &policyResMatcher{view: view, elems: make([]*elemMatcher, len(sd.names)), trie: newTrieKeys(sd, view, res)}
	if view == nil {
		return pm
	}
	for name := range res {
		i := sd.idxOf(name)
		if i < 0 {
			// A resource the service-def does not know: no hierarchy can
			// hold it, so the policy matches nothing (as in Ranger).
			pm.nkeys = len(res)
			return pm
		}
		pm.keys |= 1 << uint(i)
	}
	pm.nkeys = len(res)
	if len(res) == 0 {
		return pm
	}
	valid := 0
	for hi := range view.hierarchies {
		h := &view.hierarchies[hi]
		if h.mask&pm.keys != pm.keys {
			continue
		}
		if !hierarchyHasNoGaps(h, func(i int) bool { return pm.keys&(1<<uint(i)) != 0 }) {
			continue
		}
		valid++
		if valid == 1 {
			pm.validHier = h
		} else {
			pm.validHier = nil
		}
	}
	if valid == 0 {
		return pm
	}
	for name, pr := range res {
		i := sd.idxOf(name)
		def := view.byIdx[i]
		if def == nil {
			return pm
		}
		em := newElemMatcher(def, pr)
		pm.dynamic = pm.dynamic || em.dynamic
		pm.elems[i] = em
	}
	pm.ownHier = shortestHierarchy(view, pm.keys)
	pm.ok = true
	return pm
}

// hierarchyHasNoGaps is isHierarchyValidForResources: once a level is
// missing, no deeper level may be present.
func hierarchyHasNoGaps(h *hierarchy, present func(int) bool) bool {
	skipped := false
	for _, d := range h.defs {
		if !present(d.idx) {
			skipped = true
		} else if skipped {
			return false
		}
	}
	return true
}

func shortestHierarchy(view *resView, keys uint64) *hierarchy {
	for i := range view.hierarchies {
		if view.hierarchies[i].mask&keys == keys {
			return &view.hierarchies[i]
		}
	}
	return nil
}

func (pm *policyResMatcher) matchingHierarchy(r *reqResource) *hierarchy {
	if r.nkeys == 0 {
		if pm.validHier != nil {
			return pm.validHier
		}
		return pm.ownHier
	}
	var h *hierarchy
	switch {
	case pm.validHier != nil:
		if pm.validHier.mask&r.keys == r.keys {
			h = pm.validHier
		}
	case pm.keys&r.keys == r.keys:
		h = pm.ownHier
	case r.keys&pm.keys == pm.keys:
		h = shortestHierarchy(pm.view, r.keys)
	}
	if h == nil || !hierarchyHasNoGaps(h, r.has) {
		return nil
	}
	return h
}

// matchType computes how the policy resource relates to the request. unknown
// reports that some value could not be evaluated (an unsupported
// ${{expression}}): the caller treats such a policy as matching for denials
// only.
func (pm *policyResMatcher) matchType(r *reqResource, tc *tokenCtx) (mt matchType, unknown bool) {
	if pm.nkeys == 0 && r.nkeys == 0 {
		return mtSelf, false
	}
	if !pm.ok || r.foreign {
		return mtNone, false
	}
	h := pm.matchingHierarchy(r)
	if h == nil {
		return mtNone, false
	}
	lastNonAny, size := -1, 0
	for _, d := range h.defs {
		em := pm.elems[d.idx]
		if em == nil {
			break
		}
		if !em.matchAny {
			lastNonAny = size
		}
		size++
	}
	ret := mtNone
	if r.nkeys == 0 {
		ret = mtSelf
	}
	for _, d := range h.defs {
		em := pm.elems[d.idx]
		if em == nil {
			if r.has(d.idx) {
				ret = mtAncestor // the request goes deeper than the policy
			}
			break
		}
		if !r.has(d.idx) && !em.matchAny {
			continue
		}
		m, u := em.match(r, tc)
		if !m && !u {
			return mtNone, false
		}
		unknown = unknown || u
		ret = mtSelf
	}
	if ret == mtSelf && r.nkeys < pm.nkeys {
		if r.nkeys > lastNonAny {
			ret = mtSelfAndAllDescendants // every deeper policy level is '*'
		} else {
			ret = mtDescendant
		}
	}
	return ret, unknown
}
