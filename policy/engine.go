package policy

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// Subject is the identity a request is evaluated for.
type Subject struct {
	User       string
	Groups     []string          // from the identity provider / static config; "public" is implied for everyone
	Roles      []string          // roles asserted by the identity provider; match role items directly
	Attributes map[string]string // user attributes (add to the user store's)
}

// Resource is a hive resource: database/table/column.
type Resource struct {
	Database, Table, Column string // Column "" = table-level request
	Owner                   string // relation owner (for {OWNER}); "" if unknown
}

// Decision is the outcome of an access check.
type Decision struct {
	Allowed  bool
	PolicyID int64  // deciding policy id; -1 = super user; 0 = no policy decided (default deny)
	Reason   string // short human text, e.g. "denied by policy 12", "no policy grants select"
}

// Mask is how a column is to be masked for a subject.
type Mask struct {
	Type        string // "" = unmasked (no policy, or MASK_NONE matched); else MASK, MASK_SHOW_LAST_4, MASK_SHOW_FIRST_4, MASK_HASH, MASK_NULL, MASK_DATE_SHOW_YEAR, CUSTOM, or any other serviceDef type name (prefix "hive:" stripped for tag masks)
	ValueExpr   string // CUSTOM's valueExpr, verbatim (macros NOT expanded)
	Transformer string // serviceDef transformer for Type, verbatim ("" if none)
	PolicyID    int64
	Tag         string // tag type when the mask came from a tag policy
	Unmappable  bool   // tag mask with a component prefix other than "hive:" (caller restricts the column)
	// CurrentTag is the tag the deciding tag policy was evaluated for
	// (Ranger's current tag: TAG in the mask's expressions); nil when a
	// resource policy decided. Its Type is Tag.
	CurrentTag *Tag
}

// RowFilter is the set of row filters that apply to a table for a subject.
type RowFilter struct {
	Exprs     []string // filter expressions to AND together (resource filter, plus tag filters); empty = no filter
	PolicyIDs []int64
	// Tags is parallel to Exprs: the tag a tag policy's filter was
	// evaluated for (Ranger's current tag: TAG in the filter's
	// expressions), nil for a resource policy's filter.
	Tags []*Tag
}

// Tag is a tag that applies to a requested resource (Ranger's
// RangerTagForEval): a ServiceTags tag attached to the resource, to its
// table or to its database.
type Tag struct {
	Type       string
	Attributes map[string]string // never nil
	// MatchType is how the tagged resource relates to the requested one:
	// SELF, SELF_AND_ALL_DESCENDANTS, or ANCESTOR (the tag is on the
	// table or database of the requested column or table).
	MatchType string
}

// Options tune evaluation choices Ranger leaves open.
type Options struct {
	MaskPrecedence string // "tag" (default, Ranger's order) or "resource"
	// ReadTagFile reads the ServiceTags document that a service-def's
	// RangerTagEnricher with RangerFileBasedTagRetriever names in
	// enricherOptions.serviceTagsFileName (enricher.go), for bundles that
	// carry no tags themselves. nil: such a bundle does not compile.
	ReadTagFile func(name string) ([]byte, error)
}

// Engine evaluates one bundle. It is immutable after NewEngine and safe for
// concurrent use.
type Engine struct {
	serviceName   string
	policyVersion int64
	auditMode     string
	noAudit       map[int64]bool // ids of policies with isAuditEnabled false (audit.go)
	// Audit filters of serviceConfig and of the tag service's
	// serviceConfig, users/groups/roles never audited, and whether the
	// bundle has no policies at all (auditfilter.go).
	auditFilters    []*auditFilter
	tagAuditFilters []*auditFilter
	auditExclude    auditExclusions
	noPolicies      bool
	opts            Options

	sd              *serviceDef
	tagSD           *serviceDef // nil without tag policies
	componentPrefix string      // "hive:" on tag access and mask types
	dbIdx, tblIdx   int
	colIdx          int

	superUsers  map[string]bool
	superGroups map[string]bool

	def   *repo            // the default (unzoned) policies
	zones map[string]*zone // security zones, by name

	tags      *tagStore
	roles     *roleStore
	userStore *ranger.RangerUserStore

	timeline timeline // when schedules may change decisions (epoch.go)

	reqConds reqCondFlags // what conditions read of the request (condeval.go)
}

// NewEngine compiles a bundle. An error means the bundle cannot be
// enforced and the caller must fail closed.
func NewEngine(b *ranger.Bundle, opts Options) (*Engine, error) {
	if b == nil || b.Policies == nil {
		return nil, errors.New("policy: bundle has no service policies")
	}
	switch opts.MaskPrecedence {
	case "", "tag":
		opts.MaskPrecedence = "tag"
	case "resource":
	default:
		return nil, fmt.Errorf("policy: mask precedence %q: want \"tag\" or \"resource\"", opts.MaskPrecedence)
	}
	sp := b.Policies
	if len(sp.Policies) == 0 && len(sp.PolicyDeltas) > 0 {
		// A delta download carries changes, not the policy set: applying it
		// as a bundle would silently drop every policy.
		return nil, errors.New("policy: bundle holds policy deltas, not policies; download with supportsPolicyDeltas=false")
	}
	def := sp.ServiceDef
	if def == nil {
		def = StockHiveServiceDef()
	}
	sd, err := compileServiceDef(def, "")
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	e := &Engine{
		serviceName:     sp.ServiceName,
		policyVersion:   sp.PolicyVersion,
		auditMode:       sp.AuditMode,
		noAudit:         auditDisabled(sp),
		opts:            opts,
		sd:              sd,
		componentPrefix: sd.name + ":",
		dbIdx:           sd.idxOf("database"),
		tblIdx:          sd.idxOf("table"),
		colIdx:          sd.idxOf("column"),
		superUsers:      csvSet(sp.ServiceConfig["ranger.plugin.super.users"]),
		superGroups:     csvSet(sp.ServiceConfig["ranger.plugin.super.groups"]),
		roles:           newRoleStore(b.Roles),
		userStore:       b.UserStore,
	}
	if e.auditMode == "" {
		e.auditMode = ranger.AuditModeDefault
	}
	e.timeline = newTimeline(b)

	var tagPolicies []ranger.RangerPolicy
	if tp := sp.TagPolicies; tp != nil && len(tp.Policies) > 0 {
		if tp.ServiceDef == nil {
			return nil, errors.New("policy: tag policies come without a tag service-def")
		}
		if e.tagSD, err = compileServiceDef(tp.ServiceDef, e.componentPrefix); err != nil {
			return nil, fmt.Errorf("policy: tag service-def: %w", err)
		}
		tagPolicies = tp.Policies
	}
	// Ranger audits everything when the bundle has no resource policies
	// and no tag-policy repository; a tag-policies document with a
	// service name and a service-def builds that repository even when it
	// holds no policy (PolicyEngine's constructor), and then a request no
	// policy decides is not audited.
	tp := sp.TagPolicies
	e.noPolicies = len(sp.Policies) == 0 && (tp == nil || tp.ServiceName == "" || tp.ServiceDef == nil)
	e.auditExclude = auditExclusions{users: csvSet(sp.ServiceConfig[auditExcludeUsersKey]),
		groups: csvSet(sp.ServiceConfig[auditExcludeGroupsKey]), roles: csvSet(sp.ServiceConfig[auditExcludeRolesKey])}
	if e.auditFilters, err = compileAuditFilters(sd, sp.ServiceConfig); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if tp := sp.TagPolicies; tp != nil && tp.ServiceDef != nil && strings.TrimSpace(tp.ServiceConfig[auditFiltersKey]) != "" {
		tsd := e.tagSD
		if tsd == nil {
			if tsd, err = compileServiceDef(tp.ServiceDef, e.componentPrefix); err != nil {
				return nil, fmt.Errorf("policy: tag service-def: %w", err)
			}
			e.tagSD = tsd
		}
		if e.tagAuditFilters, err = compileAuditFilters(tsd, tp.ServiceConfig); err != nil {
			return nil, fmt.Errorf("policy: tag service: %w", err)
		}
	}
	e.def = e.buildRepo(sp.Policies, tagPolicies, "")
	if len(sp.SecurityZones) > 0 {
		e.zones = map[string]*zone{}
		for name, zi := range sp.SecurityZones {
			if name == "" {
				continue
			}
			z := &zone{name: name}
			for _, res := range zi.Resources {
				prs := map[string]ranger.RangerPolicyResource{}
				for rn, vals := range res {
					prs[rn] = ranger.RangerPolicyResource{Values: vals, IsRecursive: recursiveSupportedIn(def, rn)}
				}
				z.matchers = append(z.matchers, newPolicyResMatcher(sd, sd.views[viewAccess], prs))
			}
			tagZone := ""
			if zi.ContainsAssociatedTagService {
				tagZone = name
			}
			z.repo = e.buildRepo(zi.Policies, tagPolicies, tagZone)
			e.zones[name] = z
		}
	}
	tags, err := enricherTags(b, &opts)
	if err != nil {
		return nil, err
	}
	if tags != nil {
		e.tags = newTagStore(sd, tags, e.dbIdx, e.tblIdx)
	}
	e.reqConds = e.scanConditions()
	return e, nil
}

// repo is the policies that apply together: the default zone's, or one
// security zone's (RangerPolicyRepository).
type repo struct {
	access, masks, filters          *policySet
	tagAccess, tagMasks, tagFilters *policySet // nil without tag policies
}

// zone is a security zone: resources it governs and its policies.
type zone struct {
	name     string
	matchers []*policyResMatcher
	repo     *repo
}

// buildRepo compiles resource policies and the tag policies of tagZone (""
// for the default zone's).
func (e *Engine) buildRepo(policies, tagPolicies []ranger.RangerPolicy, tagZone string) *repo {
	sd := e.sd
	var acc, msk, flt []*cpolicy
	for i := range policies {
		p := &policies[i]
		if !p.IsEnabled {
			continue
		}
		cp := compilePolicy(sd, p, "", sd.viewFor(p.PolicyType, false))
		switch p.PolicyType {
		case ranger.PolicyTypeAccess:
			acc = append(acc, cp)
		case ranger.PolicyTypeDataMask:
			msk = append(msk, cp)
		case ranger.PolicyTypeRowFilter:
			flt = append(flt, cp)
		}
	}
	r := &repo{
		access:  newPolicySet(acc, byEvalOrder, sd.viewFor(ranger.PolicyTypeAccess, false), e.dbIdx, e.tblIdx),
		masks:   newPolicySet(msk, byPriorityName, sd.viewFor(ranger.PolicyTypeDataMask, false), e.dbIdx, e.tblIdx),
		filters: newPolicySet(flt, byPriorityName, sd.viewFor(ranger.PolicyTypeRowFilter, false), e.dbIdx, e.tblIdx),
	}
	if e.tagSD == nil {
		return r
	}
	tsd := e.tagSD
	tagIdx := tsd.idxOf("tag")
	var tacc, tmsk, tflt []*cpolicy
	for i := range tagPolicies {
		p := &tagPolicies[i]
		if !p.IsEnabled || p.ZoneName != tagZone {
			continue
		}
		cp := compilePolicy(tsd, p, e.componentPrefix, tsd.viewFor(p.PolicyType, true))
		cp.isTag = true
		if cp.pruned() {
			continue
		}
		switch p.PolicyType {
		case ranger.PolicyTypeAccess:
			tacc = append(tacc, cp)
		case ranger.PolicyTypeDataMask:
			tmsk = append(tmsk, cp)
		case ranger.PolicyTypeRowFilter:
			tflt = append(tflt, cp)
		}
	}
	r.tagAccess = newPolicySet(tacc, byEvalOrder, tsd.viewFor(ranger.PolicyTypeAccess, true), tagIdx, -1)
	r.tagMasks = newPolicySet(tmsk, byPriorityName, tsd.viewFor(ranger.PolicyTypeDataMask, true), tagIdx, -1)
	r.tagFilters = newPolicySet(tflt, byPriorityName, tsd.viewFor(ranger.PolicyTypeRowFilter, true), tagIdx, -1)
	return r
}

// reposFor picks the policies for a request as
// RangerPolicyEngineImpl.zoneAwareAccessEvaluationWithNoAudit does: the
// zone's when the resource lies in exactly one zone (any of them, in turn,
// for `_any`), else the default zone's. A zone matching only below the
// requested resource also brings in the default zone.
func (e *Engine) reposFor(rq *evalReq) []*repo {
	if len(e.zones) == 0 {
		return []*repo{e.def}
	}
	names := map[string]bool{}
	for name, z := range e.zones {
		for _, pm := range z.matchers {
			mt, _ := pm.matchType(rq.res, &rq.tc)
			if mt == mtNone {
				continue
			}
			names[name] = true
			if mt == mtDescendant {
				names[""] = true
			}
		}
	}
	if len(names) == 0 || (len(names) > 1 && !rq.isAny) {
		return []*repo{e.def}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	out := make([]*repo, 0, len(sorted))
	for _, n := range sorted {
		if n == "" {
			out = append(out, e.def)
		} else {
			out = append(out, e.zones[n].repo)
		}
	}
	return out
}

// allZoneRepos lists every zone's policies, in zone name order.
func (e *Engine) allZoneRepos() []*repo {
	names := make([]string, 0, len(e.zones))
	for n := range e.zones {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*repo, 0, len(names))
	for _, n := range names {
		out = append(out, e.zones[n].repo)
	}
	return out
}

func csvSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out[p] = true
		}
	}
	return out
}

// ServiceName is the Ranger service the bundle is for.
func (e *Engine) ServiceName() string { return e.serviceName }

// PolicyVersion is the bundle's policyVersion (-1 when the bundle has none).
func (e *Engine) PolicyVersion() int64 { return e.policyVersion }

// AuditMode is the bundle's auditMode ("audit-default" when absent).
func (e *Engine) AuditMode() string { return e.auditMode }

// IsSuperUser reports whether the subject is listed in serviceConfig
// ranger.plugin.super.users or belongs to a group in
// ranger.plugin.super.groups. Super users bypass every policy, mask and
// row filter, as in Ranger.
func (e *Engine) IsSuperUser(s *Subject) bool {
	if s == nil {
		return false
	}
	if e.superUsers[s.User] {
		return true
	}
	for _, g := range s.Groups {
		if e.superGroups[g] {
			return true
		}
	}
	return false
}

// UserAttributes returns the user store's attributes for the subject merged
// with the subject's own (which win), plus "_name", the user name.
func (e *Engine) UserAttributes(s *Subject) map[string]string {
	out := map[string]string{}
	if s == nil {
		s = &Subject{}
	}
	if e.userStore != nil {
		for k, v := range e.userStore.UserAttrMapping[s.User] {
			out[k] = v
		}
	}
	for k, v := range s.Attributes {
		out[k] = v
	}
	out["_name"] = s.User
	return out
}

// GroupAttributes returns, for each of the subject's groups, the user
// store's attributes of that group plus "_name", the group name.
func (e *Engine) GroupAttributes(s *Subject) map[string]map[string]string {
	out := map[string]map[string]string{}
	if s == nil {
		return out
	}
	for _, g := range s.Groups {
		attrs := map[string]string{}
		if e.userStore != nil {
			for k, v := range e.userStore.GroupAttrMapping[g] {
				attrs[k] = v
			}
		}
		attrs["_name"] = g
		out[g] = attrs
	}
	return out
}

// RolesOf returns the subject's roles: those asserted by the identity
// provider plus RangerRoles membership through the user, its groups, the
// group public and nested roles, sorted and without duplicates.
func (e *Engine) RolesOf(s *Subject) []string {
	if s == nil {
		return nil
	}
	return e.roles.rolesOf(s)
}

// policySet is the enabled policies of one type, sorted for evaluation and
// indexed by resource.
type policySet struct {
	policies []*cpolicy
	index    *resIndex
	view     *resView
}

func newPolicySet(ps []*cpolicy, less func(a, b *cpolicy) bool, v *resView, keyIdx, subIdx int) *policySet {
	sort.SliceStable(ps, func(i, j int) bool { return less(ps[i], ps[j]) })
	set := &policySet{policies: ps, view: v}
	for i, p := range ps {
		p.ordinal = int32(i)
	}
	set.index = newResIndex(v, keyIdx, subIdx)
	for _, p := range ps {
		for _, pm := range p.resources {
			set.index.add(p.ordinal, pm)
		}
	}
	return set
}

// evalReq carries one request through evaluation.
type evalReq struct {
	e      *Engine
	res    *reqResource
	tc     tokenCtx
	access string // lower-case; "" for `_any`
	isAny  bool
	// descScope: policies and tags matching below the requested resource
	// apply (`_any`, or Ranger's ResourceMatchingScope SELF_OR_DESCENDANTS).
	descScope bool
	// descDeny: a deny reached through such a descendant match counts
	// (Ranger's isDescendantDenyIgnored false).
	descDeny bool
	user     string
	groups   []string
	roles    []string // sorted
	at       time.Time
	tags     []*reqTag // tags of the requested resource
	curTag   *reqTag   // the tag a tag policy is being evaluated for
	subj     *Subject

	uattrs map[string]string
	gattrs map[string]map[string]string
	cs     *condState // request context and script env (condeval.go); nil until needed
}

func (e *Engine) newEvalReq(s *Subject, access string, at time.Time) *evalReq {
	if s == nil {
		s = &Subject{}
	}
	access = strings.ToLower(strings.TrimSpace(access))
	if access == "_any" {
		access = ""
	}
	rq := &evalReq{
		e:      e,
		access: access,
		isAny:  access == "",
		user:   s.User,
		groups: s.Groups,
		roles:  e.RolesOf(s),
		at:     at,
		subj:   s,
	}
	rq.descScope = rq.isAny
	rq.tc = tokenCtx{user: s.User, userAttrs: rq.userAttributes}
	return rq
}

func (rq *evalReq) setResource(r *reqResource) {
	rq.res = r
	rq.tc.owner = r.owner
}

func (rq *evalReq) hasRole(r string) bool {
	i := sort.SearchStrings(rq.roles, r)
	return i < len(rq.roles) && rq.roles[i] == r
}

func (rq *evalReq) userAttributes() map[string]string {
	if rq.uattrs == nil {
		rq.uattrs = rq.e.UserAttributes(rq.subj)
	}
	return rq.uattrs
}

func (rq *evalReq) groupAttributes() map[string]map[string]string {
	if rq.gattrs == nil {
		rq.gattrs = rq.e.GroupAttributes(rq.subj)
	}
	return rq.gattrs
}

// hiveResource maps a Resource onto the service-def's database, table and
// column resources.
func (e *Engine) hiveResource(r Resource) *reqResource {
	rr := newReqResource(len(e.sd.names))
	rr.owner = r.Owner
	rr.set(e.dbIdx, r.Database)
	rr.set(e.tblIdx, r.Table)
	rr.set(e.colIdx, r.Column)
	return rr
}

// RequestTag is a tag supplied with a Request, as Ranger's TAGS context.
type RequestTag struct {
	Type       string
	Attributes map[string]string
	MatchType  string // SELF (default), SELF_AND_ALL_DESCENDANTS, ANCESTOR or DESCENDANT
}

func (e *Engine) genericResource(req *Request) *reqResource {
	rr := newReqResource(len(e.sd.names))
	rr.owner = req.Owner
	for name, vs := range req.Resource {
		var vals []string
		for _, v := range vs {
			if v != "" {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		i := e.sd.idxOf(name)
		if i < 0 {
			rr.foreign = true
			rr.nkeys++
			continue
		}
		rr.setMulti(i, vals)
	}
	return rr
}

func (e *Engine) prepare(s *Subject, access string, at time.Time, rr *reqResource, tags []RequestTag, tagsGiven bool) *evalReq {
	return e.prepareScoped(s, access, at, rr, tags, tagsGiven, nil)
}

func (e *Engine) prepareScoped(s *Subject, access string, at time.Time, rr *reqResource, tags []RequestTag, tagsGiven bool, scope func(*evalReq)) *evalReq {
	if at.IsZero() {
		at = time.Now()
	}
	rq := e.newEvalReq(s, access, at)
	if scope != nil {
		scope(rq)
	}
	rq.setResource(rr)
	if tagsGiven {
		for i, t := range tags {
			rq.tags = append(rq.tags, &reqTag{typ: t.Type, attrs: t.Attributes, mt: parseMatchType(t.MatchType), order: i})
		}
	} else if e.tags != nil {
		rq.tags = e.tags.find(rq)
	}
	return rq
}

// prepareRequest is prepare for a Request, with its matching scope.
func (e *Engine) prepareRequest(s *Subject, access string, req *Request) *evalReq {
	scope := func(rq *evalReq) {
		rq.descScope = rq.isAny || req.SelfOrDescendants
		rq.descDeny = req.DescendantDeny
	}
	return e.prepareScoped(s, access, req.At, e.genericResource(req), req.Tags, req.Tags != nil, scope)
}
