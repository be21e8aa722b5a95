package policy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pgranger/pgranger/ranger"
)

// Audit filters are Ranger's serviceConfig "ranger.plugin.audit.filters"
// (RangerPolicyRepository.buildAuditPolicyEvaluators,
// RangerAuditPolicyEvaluator): an ordered list of rules, each naming
// resources (or tags, in the tag service's serviceConfig), an access
// result, users/groups/roles, actions/access types, and isAudited. After
// an access is decided the first rule that matches and carries isAudited
// decides whether it is audited; tag rules (for the resource's tags) are
// looked at before resource rules. A rule without isAudited decides
// nothing.
const auditFiltersKey = "ranger.plugin.audit.filters"

// Ranger's plugin configuration for users, groups and roles never
// audited (RangerPolicyEngine.PLUGIN_AUDIT_EXCLUDE_*), read from
// serviceConfig as super users are.
const (
	auditExcludeUsersKey  = "ranger.plugin.audit.exclude.users"
	auditExcludeGroupsKey = "ranger.plugin.audit.exclude.groups"
	auditExcludeRolesKey  = "ranger.plugin.audit.exclude.roles"
)

type accessResultMatch int

const (
	anyResult accessResultMatch = iota
	deniedResult
	allowedResult
	notDeterminedResult
)

// auditFilterJSON is Ranger's AuditFilter.
type auditFilterJSON struct {
	AccessResult string                                 `json:"accessResult"`
	Resources    map[string]ranger.RangerPolicyResource `json:"resources"`
	AccessTypes  []string                               `json:"accessTypes"`
	Actions      []string                               `json:"actions"`
	Users        []string                               `json:"users"`
	Groups       []string                               `json:"groups"`
	Roles        []string                               `json:"roles"`
	IsAudited    *bool                                  `json:"isAudited"`
}

type auditFilter struct {
	resources   *policyResMatcher // nil: any resource
	result      accessResultMatch
	anyUser     bool
	users       map[string]bool
	groups      map[string]bool
	roles       map[string]bool
	owner       bool // users holds {OWNER}
	anyAction   bool
	actions     map[string]bool
	accessTypes map[string]bool
	isAudited   *bool
}

// compileAuditFilters parses serviceConfig's audit filters for the
// resources of sd. A filter list that does not parse, or a filter naming
// a resource the service-def lacks, is an error: the bundle would be
// audited other than its author meant.
func compileAuditFilters(sd *serviceDef, cfg ranger.StringMap) ([]*auditFilter, error) {
	src := strings.TrimSpace(cfg[auditFiltersKey])
	if src == "" {
		return nil, nil
	}
	var list []auditFilterJSON
	if err := json.Unmarshal([]byte(lenientJSON(src)), &list); err != nil {
		return nil, fmt.Errorf("serviceConfig %s: %v", auditFiltersKey, err)
	}
	out := make([]*auditFilter, 0, len(list))
	for i := range list {
		f := &list[i]
		af := &auditFilter{isAudited: f.IsAudited, users: set(f.Users), groups: set(f.Groups), roles: set(f.Roles),
			actions: set(f.Actions), accessTypes: set(f.AccessTypes)}
		switch strings.ToUpper(f.AccessResult) {
		case "":
			af.result = anyResult
		case "DENIED":
			af.result = deniedResult
		case "ALLOWED":
			af.result = allowedResult
		case "NOT_DETERMINED":
			af.result = notDeterminedResult
		default:
			return nil, fmt.Errorf("serviceConfig %s: filter %d: accessResult %q: want DENIED, ALLOWED or NOT_DETERMINED", auditFiltersKey, i+1, f.AccessResult)
		}
		if len(f.Resources) > 0 {
			for name := range f.Resources {
				if sd.idxOf(name) < 0 {
					return nil, fmt.Errorf("serviceConfig %s: filter %d: resource %q is not in service-def %s", auditFiltersKey, i+1, name, sd.name)
				}
			}
			pm := newPolicyResMatcher(sd, sd.views[viewAccess], f.Resources)
			if !pm.ok {
				return nil, fmt.Errorf("serviceConfig %s: filter %d: resources do not form a hierarchy of service-def %s", auditFiltersKey, i+1, sd.name)
			}
			af.resources = pm
		}
		af.anyUser = len(f.Users)+len(f.Groups)+len(f.Roles) == 0 || af.groups["public"] || af.users["{USER}"]
		af.owner = af.users["{OWNER}"]
		af.anyAction = len(f.Actions) == 0 && len(f.AccessTypes) == 0
		out = append(out, af)
	}
	return out, nil
}

func set(vs []string) map[string]bool {
	if len(vs) == 0 {
		return nil
	}
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// lenientJSON turns the single-quoted strings Ranger's (Gson, lenient)
// parser accepts into JSON strings; the rest is left as it is.
func lenientJSON(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				b.WriteString(s[i:])
				return b.String()
			}
			b.WriteString(s[i : j+1])
			i = j
		case '\'':
			var v strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != '\''; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				v.WriteByte(s[j])
			}
			q, _ := json.Marshal(v.String())
			b.Write(q)
			i = j
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// auditRun is one decided access, as the audit filters see it.
type auditRun struct {
	rq      *evalReq
	action  string
	allowed bool
}

// matches is RangerAuditPolicyItemEvaluator.isMatch. The access is always
// determined in pgranger (there is no fallback to another authorizer).
func (f *auditFilter) matches(a *auditRun) bool {
	switch f.result {
	case deniedResult:
		if a.allowed {
			return false
		}
	case allowedResult:
		if !a.allowed {
			return false
		}
	case notDeterminedResult:
		return false
	}
	rq := a.rq
	if !f.anyUser {
		ok := rq.user != "" && (f.users[rq.user] || f.owner && rq.user == rq.res.owner)
		for _, g := range rq.groups {
			ok = ok || f.groups[g]
		}
		for _, r := range rq.roles {
			ok = ok || f.roles[r]
		}
		if !ok {
			return false
		}
	}
	if !f.anyAction {
		access := rq.access
		if rq.isAny {
			access = "_any"
		}
		if !(a.action != "" && f.actions[a.action]) && !f.accessTypes[access] {
			return false
		}
	}
	return true
}

// resourceMatches is RangerAuditPolicyEvaluator.matchResource for a
// resource filter.
func (f *auditFilter) resourceMatches(rq *evalReq) bool {
	if f.resources == nil {
		return true
	}
	mt, _ := f.resources.matchType(rq.res, &rq.tc)
	return scopeAccepts(mt, rq.descScope, false)
}

// filterAudit applies the audit filters: the tag filters for the
// request's tags (filter order first, then tag order), then the resource
// filters. determined is false when no filter with isAudited matched.
func (e *Engine) filterAudit(a *auditRun) (audited, determined bool) {
	rq := a.rq
	if len(e.tagAuditFilters) > 0 && len(rq.tags) > 0 {
		type cand struct {
			f   int
			tag *reqTag
		}
		var cands []cand
		for _, t := range rq.tags {
			if !scopeAccepts(t.mt, rq.descScope, true) {
				continue
			}
			trq := e.tagRequest(rq, t)
			for i, f := range e.tagAuditFilters {
				ok := f.resources == nil
				if !ok {
					mt, _ := f.resources.matchType(trq.res, &trq.tc)
					ok = mt == mtSelf || mt == mtSelfAndAllDescendants
				}
				if ok {
					cands = append(cands, cand{i, t})
				}
			}
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].f < cands[j].f })
		for _, c := range cands {
			f := e.tagAuditFilters[c.f]
			if f.isAudited != nil && f.matches(a) {
				return *f.isAudited, true
			}
		}
	}
	for _, f := range e.auditFilters {
		if f.isAudited != nil && f.resourceMatches(rq) && f.matches(a) {
			return *f.isAudited, true
		}
	}
	return false, false
}

// auditExcluded is RangerPolicyEngineImpl.isAuditExcludedUser.
func (e *Engine) auditExcluded(rq *evalReq) bool {
	if e.auditExclude.users[rq.user] {
		return true
	}
	for _, g := range rq.groups {
		if e.auditExclude.groups[g] {
			return true
		}
	}
	for _, r := range rq.roles {
		if e.auditExclude.roles[r] {
			return true
		}
	}
	return false
}

type auditExclusions struct {
	users, groups, roles map[string]bool
}

func (x auditExclusions) empty() bool {
	return len(x.users)+len(x.groups)+len(x.roles) == 0
}

// policiesAudit is the isAudited Ranger's policy evaluation leaves behind
// (RangerDefaultPolicyEvaluator.evaluate): true when a policy that applies
// to the request — an applicable tag policy for one of its tags, or a
// resource policy whose resources match in the request's scope, with its
// policy-level conditions not false — has isAuditEnabled. Ranger keeps
// evaluating policies after the access is decided until the audit is, so
// any such policy counts.
func (e *Engine) policiesAudit(rq *evalReq) bool {
	for _, r := range e.reposFor(rq) {
		if set := r.tagAccess; set != nil {
			for _, t := range rq.tags {
				if !scopeAccepts(t.mt, rq.descScope, true) {
					continue
				}
				trq := e.tagRequest(rq, t)
				for _, ord := range set.index.candidates(trq.res) {
					p := set.policies[ord]
					if p.src.IsAuditEnabled && p.applicable(rq.at) && tagPolicyMatches(trq, p) && evalConditions(p.conds, trq) != condFalse {
						return true
					}
				}
			}
		}
		for _, ord := range r.access.index.candidates(rq.res) {
			p := r.access.policies[ord]
			if !p.src.IsAuditEnabled || !p.applicable(rq.at) {
				continue
			}
			for _, pm := range p.resources {
				mt, _ := pm.matchType(rq.res, &rq.tc)
				if scopeAccepts(mt, rq.descScope, false) && evalConditions(p.conds, rq) != condFalse {
					return true
				}
			}
		}
	}
	return false
}

// auditOf is Ranger's isAudited for a decided access request
// (createAccessResult, the policy walk, evaluateAuditPolicies).
func (e *Engine) auditOf(rq *evalReq, allowed bool, action string) bool {
	var base bool
	switch {
	case e.auditExcluded(rq):
		base = false
	case e.auditMode == ranger.AuditModeAll:
		base = true
	case e.auditMode == ranger.AuditModeNone:
		base = false
	case e.noPolicies:
		base = true
	default:
		base = e.policiesAudit(rq)
	}
	if audited, ok := e.filterAudit(&auditRun{rq: rq, action: action, allowed: allowed}); ok {
		return audited
	}
	return base
}
