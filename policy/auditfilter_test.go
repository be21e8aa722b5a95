package policy

import (
	"strings"
	"testing"

	"github.com/pgranger/pgranger/ranger"
)

func auditFilterEngine(t *testing.T, filters, tagFilters string, extra ranger.StringMap) *Engine {
	t.Helper()
	all := func(db string) map[string]ranger.RangerPolicyResource {
		return map[string]ranger.RangerPolicyResource{"database": {Values: []string{db}}, "table": {Values: []string{"*"}}, "column": {Values: []string{"*"}}}
	}
	cfg := ranger.StringMap{auditFiltersKey: filters}
	for k, v := range extra {
		cfg[k] = v
	}
	sp := &ranger.ServicePolicies{ServiceName: "hive", ServiceConfig: cfg, Policies: []ranger.RangerPolicy{
		{ID: 1, IsEnabled: true, IsAuditEnabled: true, Resources: all("*"),
			PolicyItems: []ranger.RangerPolicyItem{{Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}, Groups: []string{"public"}}}},
		{ID: 2, IsEnabled: true, IsAuditEnabled: false, Resources: all("quiet"),
			DenyPolicyItems: []ranger.RangerPolicyItem{{Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}, Users: []string{"mallory"}}}},
	}}
	b := &ranger.Bundle{Policies: sp}
	if tagFilters != "" {
		sp.TagPolicies = &ranger.TagPolicies{ServiceName: "tags", ServiceDef: stockTagDefForTest(), ServiceConfig: ranger.StringMap{auditFiltersKey: tagFilters}}
		b.Tags = &ranger.ServiceTags{
			Tags:             map[int64]ranger.RangerTag{1: {Type: "NO_AUDIT"}},
			ServiceResources: []ranger.RangerServiceResource{{ID: 1, ResourceElements: map[string]ranger.RangerPolicyResource{"database": {Values: []string{"scratch"}}}}},
			ResourceToTagIDs: map[int64][]int64{1: {1}},
		}
	}
	e, err := NewEngine(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func stockTagDefForTest() *ranger.RangerServiceDef {
	return &ranger.RangerServiceDef{Name: "tag", Resources: []ranger.RangerResourceDef{{Name: "tag", Type: "string", Level: 1,
		Matcher: "org.apache.ranger.plugin.resourcematcher.RangerDefaultResourceMatcher"}},
		AccessTypes: []ranger.RangerAccessTypeDef{{Name: "hive:select"}}}
}

// The first matching filter with isAudited decides, in list order, after
// the policies' own isAuditEnabled; tag filters come first.
func TestAuditFilters(t *testing.T) {
	e := auditFilterEngine(t, `[ {'accessResult': 'DENIED', 'isAudited': true},
		{'resources': {'database': {'values': ['temp']}, 'table': {'values': ['*']}}, 'isAudited': false},
		{'users': ['etl'], 'groups': ['batch'], 'isAudited': false},
		{'actions': ['METADATA OPERATION'], 'isAudited': false},
		{'accessTypes': ['select'], 'users': ['{OWNER}'], 'isAudited': false},
		{'users': ['ann'], 'accessResult': 'ALLOWED'} ]`,
		`[ {'resources': {'tag': {'values': ['NO_AUDIT']}}, 'isAudited': false} ]`, nil)
	for _, c := range []struct {
		name   string
		s      *Subject
		db     string
		access string
		action string
		owner  string
		want   bool
	}{
		{"an audited policy allows", subj("bob"), "sales", "select", "", "", true},
		{"a filtered database", subj("bob"), "temp", "select", "", "", false},
		{"a filtered user", subj("etl"), "sales", "select", "", "", false},
		{"a filtered group", subj("x", "batch"), "sales", "select", "", "", false},
		{"a filtered action", subj("bob"), "sales", "select", "METADATA OPERATION", "", false},
		{"the owner's read", subj("bob"), "sales", "select", "", "bob", false},
		{"someone else's read", subj("bob"), "sales", "select", "", "carol", true},
		{"a denial is audited", subj("bob"), "sales", "update", "", "", true},
		{"a filter without isAudited decides nothing", subj("ann"), "sales", "select", "", "", true},
		{"a tag filter", subj("bob"), "scratch", "select", "", "", false},
		{"a denial by a policy without audit is audited by the DENIED filter", subj("mallory"), "quiet", "select", "", "", true},
	} {
		req := Request{Resource: map[string][]string{"database": {c.db}, "table": {"t"}}, Owner: c.owner, Access: c.access, Action: c.action, At: t0}
		d := e.AccessRequest(c.s, req)
		if got := e.AuditRequest(c.s, req, d); got != c.want {
			t.Errorf("%s: audited %v, want %v (decision %+v)", c.name, got, c.want, d)
		}
	}
}

// Excluded users, groups and roles are not audited unless a filter says
// otherwise.
func TestAuditExclusions(t *testing.T) {
	e := auditFilterEngine(t, "", "", ranger.StringMap{auditExcludeUsersKey: "svc", auditExcludeGroupsKey: "bots"})
	req := Request{Resource: map[string][]string{"database": {"sales"}, "table": {"t"}}, Access: "select", At: t0}
	for _, c := range []struct {
		s    *Subject
		want bool
	}{{subj("svc"), false}, {subj("x", "bots"), false}, {subj("bob"), true}} {
		if got := e.AuditRequest(c.s, req, e.AccessRequest(c.s, req)); got != c.want {
			t.Errorf("%s: %v, want %v", c.s.User, got, c.want)
		}
	}
	// The proxy's record: an excluded user's allowed read is not written,
	// a denial is.
	q := &auditQuery{Subject: subj("svc"), Resource: res("sales", "t", ""), Access: "select", PolicyIDs: [][]int64{{1}}}
	if e.AuditedAccess(q) {
		t.Error("an excluded user's read is audited")
	}
	q.Denied = true
	if !e.AuditedAccess(q) {
		t.Error("an excluded user's denial is not audited")
	}
}

// The proxy's record follows the filters; with columns, one audited
// column is enough.
func TestAuditedAccessFilters(t *testing.T) {
	e := auditFilterEngine(t, `[ {'resources': {'database': {'values': ['sales']}, 'table': {'values': ['t']}, 'column': {'values': ['note']}}, 'isAudited': false},
		{'resources': {'database': {'values': ['temp']}, 'table': {'values': ['*']}, 'column': {'values': ['*']}}, 'isAudited': false}, {'accessResult': 'DENIED', 'isAudited': true} ]`, "", nil)
	for _, c := range []struct {
		name string
		q    auditQuery
		want bool
	}{
		{"a filtered column", auditQuery{Resource: res("sales", "t", ""), Columns: []string{"note"}, Access: "select", PolicyIDs: [][]int64{{1}}}, false},
		{"a filtered and an audited column", auditQuery{Resource: res("sales", "t", ""), Columns: []string{"note", "id"}, Access: "select", PolicyIDs: [][]int64{{1}}}, true},
		{"a filtered database, table-level", auditQuery{Resource: res("temp", "t", ""), Access: "select", PolicyIDs: [][]int64{{1}}}, false},
		{"a filtered database, a column", auditQuery{Resource: res("temp", "t", ""), Columns: []string{"a"}, Access: "select", PolicyIDs: [][]int64{{1}}}, false},
		{"a denial", auditQuery{Resource: res("sales", "t", ""), Access: "select", Denied: true}, true},
		{"a denial the first filter does not audit", auditQuery{Resource: res("temp", "t", ""), Access: "select", Denied: true}, false},
		{"a policy without audit", auditQuery{Resource: res("quiet", "t", ""), Access: "select", PolicyIDs: [][]int64{{2}}}, false},
	} {
		c.q.Subject = subj("bob")
		if got := e.AuditedAccess(&c.q); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Filters that do not parse, or name what the service-def lacks, stop the
// bundle from loading.
func TestAuditFiltersInvalid(t *testing.T) {
	for _, f := range []string{
		`[ {'isAudited': tru} ]`,
		`[ {'accessResult': 'MAYBE', 'isAudited': true} ]`,
		`[ {'resources': {'bucket': {'values': ['x']}}, 'isAudited': false} ]`,
		`{'isAudited': false}`,
	} {
		sp := &ranger.ServicePolicies{ServiceName: "hive", ServiceConfig: ranger.StringMap{auditFiltersKey: f}}
		if _, err := NewEngine(&ranger.Bundle{Policies: sp}, Options{}); err == nil || !strings.Contains(err.Error(), auditFiltersKey) {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestLenientJSON(t *testing.T) {
	for in, want := range map[string]string{
		`[{'a': 'b'}]`:          `[{"a": "b"}]`,
		`{"it's": 'x"y'}`:       `{"it's": "x\"y"}`,
		`{'a': 'it\'s', "b":1}`: `{"a": "it's", "b":1}`,
	} {
		if got := lenientJSON(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
