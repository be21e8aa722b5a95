package diffgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// The universe every bundle and request draws its names from: small, so
// that random policies and random requests meet often.
var (
	databases = []string{"sales", "hr", "fin"}
	tables    = []string{"orders", "emp", "t1"}
	columns   = []string{"ssn", "name", "amount", "dept"}
	users     = []string{"alice", "bob", "carol", "dave", "eve"}
	groups    = []string{"analysts", "hr", "admins", "ops"}
	roles     = []string{"r_read", "r_admin", "r_nested"}
	tagTypes  = []string{"PII", "PCI", "SENSITIVE"}
	// accessTypes are the hive service-def's (tempudfadmin, which "all"
	// does not imply, among them).
	accessTypes = []string{"select", "update", "create", "drop", "alter", "index", "lock", "all", "read", "write", "repladmin", "serviceadmin", "tempudfadmin", "refresh"}
	maskTypes   = []string{ranger.MaskTypeMask, ranger.MaskTypeShowLast4, ranger.MaskTypeShowFirst4, ranger.MaskTypeHash, ranger.MaskTypeNull, ranger.MaskTypeNone, ranger.MaskTypeDateShowYear, ranger.MaskTypeCustom}
)

// BaseTime is the access time requests are drawn around; validity
// schedules are placed around it too.
var BaseTime = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// scriptConditions are script conditions (RangerScriptConditionEvaluator)
// in the forms Ranger's macros and variables produce; both engines
// evaluate them. Tag-policy conditions may read TAG as well.
var scriptConditions = []string{
	"IS_IN_GROUP('analysts')",
	"!IS_IN_GROUP('ops')",
	"IS_IN_ROLE('r_read')",
	"USER.dept == 'eng'",
	"GET_USER_ATTR('dept') == 'hr'",
	"HAS_USER_ATTR('region')",
	"HAS_TAG('PII')",
	"HAS_ANY_TAG",
	"ctx.isAccessedBefore('2026/03/14 16:00:00')",
	"IS_ACCESS_TIME_AFTER('2026/03/14 15:00:00')",
	"UGNAMES.length > 1",
	"IS_IN_ANY_ROLE",
}

var tagScriptConditions = []string{"TAG.level == 'high'", "TAG._type == 'PII'", "GET_TAG_ATTR('level') == 'low'"}

// customExprs are CUSTOM mask valueExprs; filterExprs row filters. Both
// use ${{…}} with attributes the user store has, and sometimes lacks.
var (
	customExprs = []string{
		"NULL",
		"{col}",
		"concat('x', {col})",
		"CASE WHEN dept = '${{USER.dept}}' THEN {col} ELSE 'x' END",
		"'${{USER.region}}'",
		"'${{UG_NAMES_CSV}}'",
		"'${{GET_UG_ATTR_CSV('region')}}'",
		"'${{UR_NAMES_CSV}}'",
		"'${{TAG_NAMES_CSV}}'",
	}
	filterExprs = []string{
		"dept = 'hr'",
		"dept = '${{USER.dept}}'",
		"region IN (${{UG_NAMES_Q_CSV}})",
		"region IN (${{GET_UG_ATTR_Q_CSV('region')}})",
		"owner = '${{USER._name}}'",
		"r IN (${{UR_NAMES_Q_CSV}})",
		"amount < 100",
		"", // an item without a filter decides nothing
	}
)

// Gen draws bundles and requests from one seed.
type Gen struct {
	r      *rand.Rand
	nextID int64
}

// New returns a generator for seed: the same seed gives the same bundles
// and requests.
func New(seed uint64) *Gen {
	return &Gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (g *Gen) pct(p int) bool          { return g.r.IntN(100) < p }
func (g *Gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

// some picks up to max distinct elements of xs (possibly none when min is 0).
func (g *Gen) some(xs []string, min, max int) []string {
	n := min + g.r.IntN(max-min+1)
	perm := g.r.Perm(len(xs))
	var out []string
	for i := 0; i < n && i < len(xs); i++ {
		out = append(out, xs[perm[i]])
	}
	return out
}

// mixCase spells a name the way a client might: as stored, upper-case,
// capitalised or mixed. Database, table and column resources ignore case.
func (g *Gen) mixCase(s string) string {
	switch g.r.IntN(6) {
	case 0:
		return strings.ToUpper(s)
	case 1:
		return strings.ToUpper(s[:1]) + s[1:]
	case 2:
		var b strings.Builder
		for _, c := range s {
			if g.pct(50) {
				b.WriteString(strings.ToUpper(string(c)))
			} else {
				b.WriteRune(c)
			}
		}
		return b.String()
	}
	return s
}

func (g *Gen) id() int64 {
	g.nextID++
	return g.nextID
}

// Bundle draws one bundle: resource access, mask and row-filter
// policies; tag policies and ServiceTags in about half; roles with
// nesting; a user store; service configuration with super users, audit
// exclusions and audit filters now and then.
func (g *Gen) Bundle() *ranger.Bundle {
	g.nextID = 0
	sp := &ranger.ServicePolicies{
		ServiceName:   "diff_hive",
		PolicyVersion: 1,
		ServiceDef:    HiveServiceDef(),
		AuditMode:     ranger.AuditModeDefault,
		ServiceConfig: ranger.StringMap{},
	}
	switch {
	case g.pct(5):
		sp.AuditMode = ranger.AuditModeAll
	case g.pct(5):
		sp.AuditMode = ranger.AuditModeNone
	}
	for range 2 + g.r.IntN(7) {
		sp.Policies = append(sp.Policies, g.accessPolicy())
	}
	for range g.r.IntN(4) {
		sp.Policies = append(sp.Policies, g.maskPolicy(false))
	}
	for range g.r.IntN(3) {
		sp.Policies = append(sp.Policies, g.rowFilterPolicy())
	}
	if g.pct(10) {
		sp.ServiceConfig["ranger.plugin.super.users"] = g.pick(users)
	}
	if g.pct(5) {
		sp.ServiceConfig["ranger.plugin.super.groups"] = g.pick(groups)
	}
	if g.pct(10) {
		sp.ServiceConfig["ranger.plugin.audit.exclude.users"] = g.pick(users)
	}
	if g.pct(5) {
		sp.ServiceConfig["ranger.plugin.audit.exclude.groups"] = g.pick(groups)
	}
	if g.pct(20) {
		sp.ServiceConfig["ranger.plugin.audit.filters"] = g.auditFilters()
	}
	b := &ranger.Bundle{Policies: sp, Roles: g.roles(), UserStore: g.userStore()}
	if g.pct(50) {
		tp := &ranger.TagPolicies{ServiceName: "diff_tag", PolicyVersion: 1, ServiceDef: TagServiceDef(), AuditMode: sp.AuditMode}
		for range 1 + g.r.IntN(4) {
			tp.Policies = append(tp.Policies, g.tagAccessPolicy())
		}
		for range g.r.IntN(3) {
			tp.Policies = append(tp.Policies, g.maskPolicy(true))
		}
		sp.TagPolicies = tp
		b.Tags = g.serviceTags()
	}
	return b
}

func (g *Gen) resourceValue(name string, wildcards bool) string {
	if !wildcards {
		if g.pct(3) {
			return "*"
		}
		return g.mixCase(name)
	}
	switch g.r.IntN(10) {
	case 0, 1:
		return "*"
	case 2:
		return name[:2] + "*"
	case 3:
		return "*" + name[len(name)-2:]
	case 4:
		return "?" + name[1:]
	case 5:
		return "nope"
	}
	return g.mixCase(name)
}

func (g *Gen) resource(universe []string, wildcards bool) ranger.RangerPolicyResource {
	n := 1
	if g.pct(20) {
		n = 2
	}
	res := ranger.RangerPolicyResource{}
	for _, v := range g.some(universe, n, n) {
		res.Values = append(res.Values, g.resourceValue(v, wildcards))
	}
	if wildcards && g.pct(12) {
		res.IsExcludes = true
	}
	// hive resources do not support isRecursive: both must ignore it.
	if g.pct(5) {
		res.IsRecursive = true
	}
	return res
}

func (g *Gen) accessResources() map[string]ranger.RangerPolicyResource {
	res := map[string]ranger.RangerPolicyResource{"database": g.resource(databases, true)}
	if g.pct(70) {
		res["table"] = g.resource(tables, true)
		if g.pct(55) {
			res["column"] = g.resource(columns, true)
		}
	}
	return res
}

func (g *Gen) item(access []string, tag bool) ranger.RangerPolicyItem {
	it := ranger.RangerPolicyItem{}
	for _, a := range g.some(access, 1, 3) {
		if tag {
			a = "hive:" + a
		}
		it.Accesses = append(it.Accesses, ranger.RangerPolicyItemAccess{Type: a, IsAllowed: true})
	}
	it.Users = g.some(users, 0, 2)
	it.Groups = g.some(groups, 0, 1)
	it.Roles = g.some(roles, 0, 1)
	if g.pct(8) {
		it.Users = append(it.Users, "{USER}")
	}
	if g.pct(10) {
		it.Users = append(it.Users, "{OWNER}")
	}
	if g.pct(15) {
		it.Groups = append(it.Groups, "public")
	}
	if g.pct(10) {
		conds := scriptConditions
		if tag && g.pct(50) {
			conds = tagScriptConditions
		}
		it.Conditions = []ranger.RangerPolicyItemCondition{{Type: "expression", Values: []string{g.pick(conds)}}}
	}
	return it
}

func (g *Gen) items(n int, access []string, tag bool) []ranger.RangerPolicyItem {
	var out []ranger.RangerPolicyItem
	for range n {
		out = append(out, g.item(access, tag))
	}
	return out
}

func (g *Gen) basePolicy(typ int, tag bool) ranger.RangerPolicy {
	id := g.id()
	if tag {
		id += 1000
	}
	p := ranger.RangerPolicy{
		ID:             id,
		Name:           fmt.Sprintf("%c%d", 'a'+rune(g.r.IntN(26)), id),
		IsEnabled:      !g.pct(7),
		IsAuditEnabled: !g.pct(10),
		PolicyType:     typ,
	}
	if g.pct(20) {
		p.PolicyPriority = ranger.PolicyPriorityOverride
	}
	if g.pct(10) {
		p.ValiditySchedules = []ranger.RangerValiditySchedule{g.schedule()}
	}
	if g.pct(5) {
		p.Conditions = []ranger.RangerPolicyItemCondition{{Type: "expression", Values: []string{g.pick(scriptConditions)}}}
	}
	return p
}

func (g *Gen) accessPolicy() ranger.RangerPolicy {
	p := g.basePolicy(ranger.PolicyTypeAccess, false)
	p.Resources = g.accessResources()
	if g.pct(8) {
		p.AdditionalResources = []map[string]ranger.RangerPolicyResource{g.accessResources()}
	}
	p.IsDenyAllElse = g.pct(8)
	p.PolicyItems = g.items(g.r.IntN(3)+boolInt(g.pct(80)), accessTypes, false)
	if g.pct(40) {
		p.DenyPolicyItems = g.items(1+g.r.IntN(2), accessTypes, false)
	}
	if g.pct(20) {
		p.AllowExceptions = g.items(1, accessTypes, false)
	}
	if g.pct(20) {
		p.DenyExceptions = g.items(1, accessTypes, false)
	}
	return p
}

func (g *Gen) tagAccessPolicy() ranger.RangerPolicy {
	p := g.basePolicy(ranger.PolicyTypeAccess, true)
	p.Resources = map[string]ranger.RangerPolicyResource{"tag": {Values: g.some(tagTypes, 1, 2)}}
	p.IsDenyAllElse = g.pct(5)
	p.PolicyItems = g.items(g.r.IntN(3), accessTypes, true)
	if g.pct(40) {
		p.DenyPolicyItems = g.items(1, accessTypes, true)
	}
	if g.pct(15) {
		p.AllowExceptions = g.items(1, accessTypes, true)
	}
	if g.pct(15) {
		p.DenyExceptions = g.items(1, accessTypes, true)
	}
	return p
}

func (g *Gen) maskPolicy(tag bool) ranger.RangerPolicy {
	p := g.basePolicy(ranger.PolicyTypeDataMask, tag)
	if tag {
		p.Resources = map[string]ranger.RangerPolicyResource{"tag": {Values: g.some(tagTypes, 1, 2)}}
	} else {
		p.Resources = map[string]ranger.RangerPolicyResource{
			"database": g.resource(databases, false),
			"table":    g.resource(tables, false),
			"column":   g.resource(columns, false),
		}
	}
	for range 1 + g.r.IntN(3) {
		it := ranger.RangerDataMaskPolicyItem{RangerPolicyItem: g.item([]string{"select"}, tag)}
		mt := g.pick(maskTypes)
		info := &ranger.RangerPolicyItemDataMaskInfo{DataMaskType: mt}
		if mt == ranger.MaskTypeCustom {
			info.ValueExpr = g.pick(customExprs)
		}
		if tag {
			info.DataMaskType = "hive:" + mt
		}
		it.DataMaskInfo = info
		p.DataMaskPolicyItems = append(p.DataMaskPolicyItems, it)
	}
	return p
}

func (g *Gen) rowFilterPolicy() ranger.RangerPolicy {
	p := g.basePolicy(ranger.PolicyTypeRowFilter, false)
	p.Resources = map[string]ranger.RangerPolicyResource{
		"database": g.resource(databases, false),
		"table":    g.resource(tables, false),
	}
	for range 1 + g.r.IntN(3) {
		it := ranger.RangerRowFilterPolicyItem{RangerPolicyItem: g.item([]string{"select"}, false)}
		if f := g.pick(filterExprs); f != "" {
			it.RowFilterInfo = &ranger.RangerPolicyItemRowFilterInfo{FilterExpr: f}
		}
		p.RowFilterPolicyItems = append(p.RowFilterPolicyItems, it)
	}
	return p
}

// schedule is a validity schedule around BaseTime: a window that may or
// may not contain the request's time, in GMT (blank) or a named zone, and
// sometimes a daily recurrence. Recurrences only without a zone: Ranger
// reads them in the plugin JVM's zone (the oracle runs in UTC), pgranger
// in the schedule's (a deliberate difference, docs/policy-semantics.md).
func (g *Gen) schedule() ranger.RangerValiditySchedule {
	const layout = "2006/01/02 15:04:05"
	s := ranger.RangerValiditySchedule{}
	zone := ""
	if g.pct(30) {
		zone = g.pick([]string{"GMT", "America/New_York", "Asia/Kolkata"})
	}
	s.TimeZone = zone
	loc := time.UTC
	if zone != "" && zone != "GMT" {
		loc, _ = time.LoadLocation(zone)
	}
	off := func() time.Duration { return time.Duration(g.r.IntN(240)-120) * time.Minute }
	if g.pct(80) {
		s.StartTime = BaseTime.Add(off()).In(loc).Format(layout)
	}
	if g.pct(80) {
		s.EndTime = BaseTime.Add(off()).In(loc).Format(layout)
	}
	if zone == "" && g.pct(30) {
		s.Recurrences = []ranger.RangerValidityRecurrence{{
			Schedule: ranger.RecurrenceSchedule{Minute: "0", Hour: ranger.LenientString(fmt.Sprint(13 + g.r.IntN(4))), DayOfMonth: "*", DayOfWeek: "*", Month: "*", Year: "*"},
			Interval: ranger.ValidityInterval{Hours: g.r.IntN(3), Minutes: g.r.IntN(60)},
		}}
	}
	return s
}

func (g *Gen) auditFilters() string {
	var fs []string
	for range 1 + g.r.IntN(3) {
		switch g.r.IntN(5) {
		case 0:
			fs = append(fs, "{'accessResult':'DENIED','isAudited':true}")
		case 1:
			fs = append(fs, fmt.Sprintf("{'users':['%s'],'isAudited':false}", g.pick(users)))
		case 2:
			fs = append(fs, fmt.Sprintf("{'resources':{'database':{'values':['%s']}},'isAudited':false}", g.pick(databases)))
		case 3:
			fs = append(fs, "{'accessTypes':['select'],'accessResult':'ALLOWED','isAudited':false}")
		case 4:
			fs = append(fs, fmt.Sprintf("{'groups':['%s'],'isAudited':true}", g.pick(groups)))
		}
	}
	return "[" + strings.Join(fs, ",") + "]"
}

// roles: each role lists some users and groups, sometimes the group
// public, and r_nested contains another role.
func (g *Gen) roles() *ranger.RangerRoles {
	rr := &ranger.RangerRoles{ServiceName: "diff_hive", RoleVersion: 1}
	for i, name := range roles {
		r := ranger.RangerRole{ID: int64(i + 1), Name: name, IsEnabled: true}
		for _, u := range g.some(users, 0, 2) {
			r.Users = append(r.Users, ranger.RoleMember{Name: u})
		}
		for _, gr := range g.some(groups, 0, 1) {
			r.Groups = append(r.Groups, ranger.RoleMember{Name: gr})
		}
		if g.pct(10) {
			r.Groups = append(r.Groups, ranger.RoleMember{Name: "public"})
		}
		if name == "r_nested" && g.pct(70) {
			r.Roles = []ranger.RoleMember{{Name: g.pick(roles[:2])}}
		}
		rr.RangerRoles = append(rr.RangerRoles, r)
	}
	return rr
}

// userStore gives most users a dept and a region and every group a
// region; Ranger needs a group mapping to be present at all.
func (g *Gen) userStore() *ranger.RangerUserStore {
	us := &ranger.RangerUserStore{UserStoreVersion: 1, UserAttrMapping: map[string]ranger.StringMap{}, GroupAttrMapping: map[string]ranger.StringMap{}}
	for _, u := range users {
		attrs := ranger.StringMap{}
		if g.pct(85) {
			attrs["dept"] = g.pick([]string{"eng", "hr", "sales"})
		}
		if g.pct(70) {
			attrs["region"] = g.pick([]string{"US", "EU"})
		}
		if len(attrs) > 0 {
			us.UserAttrMapping[u] = attrs
		}
	}
	for _, gr := range groups {
		us.GroupAttrMapping[gr] = ranger.StringMap{"region": g.pick([]string{"US", "EU", "APAC"})}
	}
	return us
}

// serviceTags attaches tags to databases, tables and columns (names in
// any case), with attributes the tag conditions read.
func (g *Gen) serviceTags() *ranger.ServiceTags {
	st := &ranger.ServiceTags{ServiceName: "diff_hive", TagVersion: 1, TagDefinitions: map[int64]ranger.RangerTagDef{},
		Tags: map[int64]ranger.RangerTag{}, ResourceToTagIDs: map[int64][]int64{}}
	for i, t := range tagTypes {
		st.TagDefinitions[int64(i+1)] = ranger.RangerTagDef{ID: int64(i + 1), Name: t}
	}
	nTags := 1 + g.r.IntN(4)
	for i := 1; i <= nTags; i++ {
		st.Tags[int64(i)] = ranger.RangerTag{ID: int64(i), Type: g.pick(tagTypes), Attributes: ranger.StringMap{"level": g.pick([]string{"high", "low"})}}
	}
	for i := 1; i <= 1+g.r.IntN(5); i++ {
		el := map[string]ranger.RangerPolicyResource{"database": {Values: []string{g.mixCase(g.pick(databases))}}}
		if g.pct(70) {
			el["table"] = ranger.RangerPolicyResource{Values: []string{g.mixCase(g.pick(tables))}}
			if g.pct(60) {
				el["column"] = ranger.RangerPolicyResource{Values: []string{g.mixCase(g.pick(columns))}}
			}
		}
		st.ServiceResources = append(st.ServiceResources, ranger.RangerServiceResource{ID: int64(i), ServiceName: "diff_hive", ResourceElements: el})
		var ids []int64
		for _, k := range g.r.Perm(nTags)[:1+g.r.IntN(min(2, nTags))] {
			ids = append(ids, int64(k+1))
		}
		st.ResourceToTagIDs[int64(i)] = ids
	}
	return st
}

// Request is one question put to both engines.
type Request struct {
	// Kind is "access", "mask" (a column) or "rowfilter" (a table).
	Kind     string   `json:"kind"`
	User     string   `json:"user"`
	Groups   []string `json:"groups"`
	Database string   `json:"database"`
	Table    string   `json:"table,omitempty"`
	Column   string   `json:"column,omitempty"`
	Owner    string   `json:"owner,omitempty"`
	// Access is the access type of an access request, "_any" too.
	Access string `json:"access,omitempty"`
	// SelfOrDescendants is Ranger's ResourceMatchingScope
	// SELF_OR_DESCENDANTS.
	SelfOrDescendants bool      `json:"selfOrDescendants,omitempty"`
	At                time.Time `json:"at"`
}

// Requests draws n requests against a bundle: access requests at the
// database, table or column level, masks of columns, row filters of
// tables; users with random groups, owners, access times around BaseTime;
// names in any case.
func (g *Gen) Requests(n int) []Request {
	out := make([]Request, 0, n)
	for range n {
		q := Request{User: g.pick(users), Groups: g.some(groups, 0, 2), Database: g.mixCase(g.pick(databases)),
			At: BaseTime.Add(time.Duration(g.r.IntN(300)-150) * time.Minute)}
		if q.Groups == nil {
			q.Groups = []string{}
		}
		if g.pct(30) {
			q.Owner = g.pick(users)
		}
		switch k := g.r.IntN(100); {
		case k < 60:
			q.Kind = "access"
			if g.pct(80) {
				q.Table = g.mixCase(g.pick(tables))
				if g.pct(60) {
					q.Column = g.mixCase(g.pick(columns))
				}
			}
			q.Access = g.pick(accessTypes)
			if g.pct(15) {
				q.Access = "_any"
			} else if g.pct(10) {
				q.SelfOrDescendants = true
			}
		case k < 85:
			q.Kind = "mask"
			q.Table = g.mixCase(g.pick(tables))
			q.Column = g.mixCase(g.pick(columns))
		default:
			q.Kind = "rowfilter"
			q.Table = g.mixCase(g.pick(tables))
		}
		out = append(out, q)
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// HiveServiceDef is the stock hive service-def with a script condition
// ("expression", RangerScriptConditionEvaluator), which both engines
// evaluate.
func HiveServiceDef() *ranger.RangerServiceDef {
	sd := policy.StockHiveServiceDef()
	sd.PolicyConditions = []ranger.RangerPolicyConditionDef{scriptConditionDef()}
	return sd
}

func scriptConditionDef() ranger.RangerPolicyConditionDef {
	return ranger.RangerPolicyConditionDef{ItemID: 1, Name: "expression",
		Evaluator:        "org.apache.ranger.plugin.conditionevaluator.RangerScriptConditionEvaluator",
		EvaluatorOptions: ranger.StringMap{"engineName": "JavaScript", "ui.isMultiline": "true"}}
}

// TagServiceDef is the tag service-def as Ranger Admin serves it for a
// tag service linked to hive: the tag resource, hive's access and mask
// types with the "hive:" prefix, RangerTagEnricher and a script condition.
func TagServiceDef() *ranger.RangerServiceDef {
	hive := policy.StockHiveServiceDef()
	tagRes := ranger.RangerResourceDef{ItemID: 1, Name: "tag", Type: "string", Level: 1, Mandatory: true,
		Matcher:        "org.apache.ranger.plugin.resourcematcher.RangerDefaultResourceMatcher",
		MatcherOptions: ranger.StringMap{"wildCard": "false", "ignoreCase": "false"}}
	sd := &ranger.RangerServiceDef{ID: 100, Name: "tag", IsEnabled: true, Resources: []ranger.RangerResourceDef{tagRes},
		PolicyConditions: []ranger.RangerPolicyConditionDef{scriptConditionDef()},
		ContextEnrichers: []ranger.RangerContextEnricherDef{{ItemID: 1, Name: "TagEnricher", Enricher: "org.apache.ranger.plugin.contextenricher.RangerTagEnricher"}},
		DataMaskDef:      &ranger.RangerDataMaskDef{Resources: []ranger.RangerResourceDef{tagRes}}}
	for i, a := range hive.AccessTypes {
		at := ranger.RangerAccessTypeDef{ItemID: int64(100 + i), Name: "hive:" + a.Name, Category: a.Category}
		for _, ig := range a.ImpliedGrants {
			at.ImpliedGrants = append(at.ImpliedGrants, "hive:"+ig)
		}
		sd.AccessTypes = append(sd.AccessTypes, at)
	}
	sd.DataMaskDef.AccessTypes = []ranger.RangerAccessTypeDef{{ItemID: 100, Name: "hive:select"}}
	for _, mt := range hive.DataMaskDef.MaskTypes {
		mt.ItemID += 100
		mt.Name = "hive:" + mt.Name
		sd.DataMaskDef.MaskTypes = append(sd.DataMaskDef.MaskTypes, mt)
	}
	return sd
}
