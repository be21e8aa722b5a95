package policy

import (
	"sort"
	"strings"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/rangerexpr"
)

// RequestContext is what the caller knows of one request beyond the
// subject, the resource and the access: Ranger's request fields and
// context (RangerAccessRequest.getClientIPAddress, getContext()).
type RequestContext struct {
	ClientIP  string
	SessionID string
	Action    string
	// RequestedResources is Ranger's REQUESTED_RESOURCES: every resource
	// the statement reads, as Hive's buildRequestContextWithAllAccessedResources
	// lists them — a column resource per column read, a table resource
	// for a table read without columns. nil means the caller does not
	// know them (the request is not a statement's): then accessed-together
	// conditions are false and not-accessed-together ones true, as in
	// Ranger when the context has no REQUESTED_RESOURCES.
	RequestedResources []Resource
	// Attributes are further context values by name, read by
	// RangerContextAttributeValueIn/NotInCondition and
	// ctx.getRequestContextAttribute.
	Attributes map[string]string
}

// ConditionsReadRequest reports whether some condition of the bundle reads
// the request beyond subject, resource, access and time (a script reading
// REQ or the client's address, a context attribute, the requested
// resources): a caller that caches decisions must then key them by the
// RequestContext too.
func (e *Engine) ConditionsReadRequest() bool { return e.reqConds.request }

// ConditionsReadRequestedResources reports whether some condition reads
// REQUESTED_RESOURCES: a statement's decisions must then be made with the
// statement's whole resource set (Request.Context).
func (e *Engine) ConditionsReadRequestedResources() bool { return e.reqConds.requested }

// reqCondFlags summarises the conditions of a bundle.
type reqCondFlags struct {
	request, requested bool
	time               bool // a script reads the access time
}

// withContext attaches the request context.
func (rq *evalReq) withContext(ctx *RequestContext) {
	if ctx != nil {
		rq.state().ctx = ctx
	}
}

// state is the evalReq's condition state, made on first use so that a
// request without conditions pays nothing for it.
func (rq *evalReq) state() *condState {
	if rq.cs == nil {
		rq.cs = &condState{}
	}
	return rq.cs
}

// condState is the part of an evalReq that conditions read.
type condState struct {
	ctx    *RequestContext
	env    *rangerexpr.Env // built on first script evaluation
	reqRes []*reqResource  // ctx.RequestedResources, built on first use
}

// scanConditions computes the engine's reqCondFlags.
func (e *Engine) scanConditions() reqCondFlags {
	var f reqCondFlags
	see := func(conds []*condition) {
		for _, c := range conds {
			switch c.kind {
			case condAccessedTogether, condNotAccessedTogether:
				f.requested, f.request = true, true
			case condScript:
				// A script that reads no client value decides alike for
				// every client: the caller need not pass or key on one.
				f.request = f.request || c.script.ReadsClient()
				f.time = f.time || c.script.ReadsTime()
			case condContextIn, condContextNotIn, condContextMatch:
				f.request = true
			}
		}
	}
	seeSet := func(ps *policySet) {
		if ps == nil {
			return
		}
		for _, p := range ps.policies {
			see(p.conds)
			for _, items := range [][]*citem{p.allow, p.deny, p.allowEx, p.denyEx, p.masks, p.filters} {
				for _, it := range items {
					see(it.conds)
				}
			}
		}
	}
	repos := append([]*repo{e.def}, e.allZoneRepos()...)
	for _, r := range repos {
		for _, ps := range []*policySet{r.access, r.masks, r.filters, r.tagAccess, r.tagMasks, r.tagFilters} {
			seeSet(ps)
		}
	}
	if f.time {
		// A decision may change at any moment: TimeEpoch changes every
		// minute, as for recurring schedules, so a cached decision is
		// at most a minute old.
		e.timeline.recurring = true
	}
	return f
}

// compileRequestCondition prepares the conditions that read the request.
func compileRequestCondition(sd *serviceDef, def *ranger.RangerPolicyConditionDef, c ranger.RangerPolicyItemCondition, cond *condition) {
	ev := def.Evaluator
	switch {
	case strings.HasSuffix(ev, ".RangerContextAttributeValueInCondition"),
		strings.HasSuffix(ev, ".RangerContextAttributeValueNotInCondition"):
		cond.kind = condContextIn
		if strings.HasSuffix(ev, "NotInCondition") {
			cond.kind = condContextNotIn
		}
		// Ranger reads evaluatorOptions.attributeName verbatim and the
		// values untrimmed.
		cond.attr, cond.values = def.EvaluatorOptions["attributeName"], c.Values
	case strings.HasSuffix(ev, "SimpleMatcher"):
		// RangerSampleSimpleMatcher: the context value under
		// evaluatorOptions.CONTEXT_NAME matches one of the values
		// (FilenameUtils.wildcardMatch); no name or no values match
		// anything.
		cond.kind = condContextMatch
		cond.attr, cond.values = def.EvaluatorOptions["CONTEXT_NAME"], c.Values
	default:
		cond.kind = condAccessedTogether
		if strings.HasSuffix(ev, ".RangerHiveResourcesNotAccessedTogetherCondition") {
			cond.kind = condNotAccessedTogether
		}
		// buildMatcher: hive only; "db[.table[.column]]", a missing
		// level is "*"; any other spec builds no matcher.
		if sd.name != "hive" {
			return
		}
		for _, v := range c.Values {
			parts := splitNonEmpty(strings.TrimSpace(v), '.') // StringUtils.split: empty tokens dropped
			if len(parts) == 0 || len(parts) > 3 {
				continue
			}
			for len(parts) < 3 {
				parts = append(parts, "*")
			}
			res := map[string]ranger.RangerPolicyResource{
				"database": {Values: []string{parts[0]}},
				"table":    {Values: []string{parts[1]}},
				"column":   {Values: []string{parts[2]}},
			}
			cond.mutex = append(cond.mutex, newPolicyResMatcher(sd, sd.views[viewAccess], res))
		}
	}
}

func (c *condition) evalRequest(rq *evalReq) condResult {
	ctx := rq.state().ctx
	switch c.kind {
	case condContextIn, condContextNotIn:
		if c.attr == "" || len(c.values) == 0 || ctx == nil {
			return condTrue
		}
		val, ok := ctx.Attributes[c.attr]
		if !ok {
			return condTrue // Ranger: no such context value, the condition holds
		}
		return boolResult(containsStr(c.values, val) == (c.kind == condContextIn))
	case condContextMatch:
		if c.attr == "" || len(c.values) == 0 {
			return condTrue
		}
		var val string
		if ctx != nil {
			val = ctx.Attributes[c.attr]
		}
		if strings.TrimSpace(val) == "" {
			return condFalse
		}
		for _, pat := range c.values {
			if wildcardMatch(val, pat) {
				return condTrue
			}
		}
		return condFalse
	}
	if len(c.mutex) == 0 {
		return condTrue // Ranger: not initialized or no matcher
	}
	if ctx == nil || ctx.RequestedResources == nil {
		return boolResult(c.kind == condNotAccessedTogether)
	}
	excluded := rq.mutuallyExcluded(c.mutex)
	if c.kind == condAccessedTogether {
		return boolResult(!excluded)
	}
	return boolResult(excluded)
}

// mutuallyExcluded is RangerRequestedResources.isMutuallyExcluded: false
// when, over the requested resources (more than one) and the matchers, a
// second (resource, matcher) match is found.
func (rq *evalReq) mutuallyExcluded(matchers []*policyResMatcher) bool {
	if rq.cs.reqRes == nil {
		seen := map[Resource]bool{}
		for _, r := range rq.cs.ctx.RequestedResources {
			if seen[r] { // addRequestedResource keeps one of equal resources
				continue
			}
			seen[r] = true
			rq.cs.reqRes = append(rq.cs.reqRes, rq.e.hiveResource(r))
		}
	}
	if len(rq.cs.reqRes) <= 1 {
		return true
	}
	matched := 0
	for _, r := range rq.cs.reqRes {
		for _, m := range matchers {
			if rq.e.isMatch(m, r, &rq.tc) {
				matched++ // a resource matching two matchers counts twice
				if matched > 1 {
					return false
				}
			}
		}
	}
	return true
}

// isMatch is RangerDefaultPolicyResourceMatcher.isMatch(resource,
// evalContext): every level the resource names matches the matcher's
// value, every level it does not name is "*" in the matcher.
func (e *Engine) isMatch(pm *policyResMatcher, r *reqResource, tc *tokenCtx) bool {
	if !pm.ok || r.nkeys == 0 || r.foreign {
		return false
	}
	for i, em := range pm.elems {
		switch {
		case em == nil:
			if r.has(i) {
				return false
			}
		case r.has(i):
			if m, unknown := em.match(r, tc); !m || unknown {
				return false
			}
		case !em.matchAny:
			return false
		}
	}
	return true
}

// exprEnv is the script context of the request (RangerRequestScriptEvaluator).
func (rq *evalReq) exprEnv() *rangerexpr.Env {
	cs := rq.state()
	env := cs.env
	if env == nil {
		env = &rangerexpr.Env{
			User:       rq.user,
			Attrs:      rq.userAttributes(),
			Groups:     sortedUniq(rq.groups),
			GroupAttrs: rq.groupAttributes(),
			Roles:      rq.roles,
			Resource:   map[string]string{},
			Request:    &rangerexpr.Request{AccessType: rq.access, AccessTime: rq.at, TimeZone: javaTimeZone},
		}
		if rq.isAny {
			env.Request.AccessType = "_any"
		}
		if ctx := cs.ctx; ctx != nil {
			env.Request.ClientIP, env.Request.SessionID, env.Request.Action = ctx.ClientIP, ctx.SessionID, ctx.Action
			env.Request.Context = ctx.Attributes
		}
		if rq.res != nil {
			for i, name := range rq.e.sd.names {
				if rq.res.has(i) {
					env.Resource[name] = rq.res.vals[i]
				}
			}
			if rq.res.owner != "" {
				env.Resource["_ownerUser"] = rq.res.owner
			}
		}
		tags := append([]*reqTag(nil), rq.tags...)
		sort.SliceStable(tags, func(i, j int) bool { return tags[i].order < tags[j].order })
		for _, t := range tags {
			env.Tags = append(env.Tags, rangerexpr.Tag{Type: t.typ, Attributes: t.attrs, MatchType: t.mt.String()})
		}
		cs.env = env
	}
	env.Tag = nil
	if t := rq.curTag; t != nil {
		env.Tag = &rangerexpr.Tag{Type: t.typ, Attributes: t.attrs, MatchType: t.mt.String()}
	}
	return env
}

func sortedUniq(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	n := 0
	for i, s := range out {
		if i == 0 || s != out[n-1] {
			out[n] = s
			n++
		}
	}
	return out[:n]
}
