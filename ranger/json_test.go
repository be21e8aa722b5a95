package ranger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/internal/testrepo"
)

func TestParseServicePoliciesDefaults(t *testing.T) {
	doc := `{
	  "serviceName": "cm_hive",
	  "policies": [
	    {"id": 1, "name": "p1", "resources": {"database": {"values": ["db"]}},
	     "policyItems": [{"accesses": [{"type": "select"}, {"type": "update", "isAllowed": false}], "users": ["u"]}]},
	    {"id": 2, "name": "p2", "isEnabled": false, "isAuditEnabled": false, "policyType": null, "policyPriority": 1},
	    {"id": 3, "name": "p3", "policyType": 1}
	  ],
	  "someFutureField": {"x": [1, 2, 3]}
	}`
	sp, err := ParseServicePolicies([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if sp.PolicyVersion != -1 {
		t.Errorf("policyVersion = %d, want -1 when absent", sp.PolicyVersion)
	}
	if sp.AuditMode != AuditModeDefault {
		t.Errorf("auditMode = %q, want %q", sp.AuditMode, AuditModeDefault)
	}
	if len(sp.Policies) != 3 {
		t.Fatalf("got %d policies", len(sp.Policies))
	}
	p1, p2, p3 := sp.Policies[0], sp.Policies[1], sp.Policies[2]
	tests := []struct {
		name      string
		got, want any
	}{
		{"p1 isEnabled default", p1.IsEnabled, true},
		{"p1 isAuditEnabled default", p1.IsAuditEnabled, true},
		{"p1 policyType default", p1.PolicyType, PolicyTypeAccess},
		{"p1 isDenyAllElse default", p1.IsDenyAllElse, false},
		{"p1 access isAllowed default", p1.PolicyItems[0].Accesses[0].IsAllowed, true},
		{"p1 access isAllowed explicit false", p1.PolicyItems[0].Accesses[1].IsAllowed, false},
		{"p1 resource value", p1.Resources["database"].Values[0], "db"},
		{"p2 isEnabled false", p2.IsEnabled, false},
		{"p2 isAuditEnabled false", p2.IsAuditEnabled, false},
		{"p2 null policyType", p2.PolicyType, PolicyTypeAccess},
		{"p2 priority", p2.PolicyPriority, PolicyPriorityOverride},
		{"p3 policyType", p3.PolicyType, PolicyTypeDataMask},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestMatcherOptionsStringsOrBooleans(t *testing.T) {
	doc := `{"serviceDef": {"name": "hive", "resources": [
	  {"name": "database", "level": 10, "matcherOptions": {"wildCard": "true", "ignoreCase": "false"}},
	  {"name": "table", "level": 20, "parent": "database", "matcherOptions": {"wildCard": true, "ignoreCase": false, "n": 3, "gone": null}}
	]}}`
	sp, err := ParseServicePolicies([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, rd := range sp.ServiceDef.Resources {
		if rd.MatcherOptions["wildCard"] != "true" || rd.MatcherOptions["ignoreCase"] != "false" {
			t.Errorf("%s: matcherOptions = %v", rd.Name, rd.MatcherOptions)
		}
	}
	opts := sp.ServiceDef.Resources[1].MatcherOptions
	if opts["n"] != "3" {
		t.Errorf("numeric option = %q", opts["n"])
	}
	if _, ok := opts["gone"]; ok {
		t.Errorf("null option kept")
	}
	if !sp.ServiceDef.IsEnabled {
		t.Errorf("serviceDef isEnabled should default to true")
	}
}

func TestTimestamps(t *testing.T) {
	tests := []struct {
		name   string
		value  string
		want   time.Time
		isZero bool
	}{
		{"epoch millis", `1564534066221`, time.UnixMilli(1564534066221), false},
		{"cache file string", `"20190730-17:47:46.221--0700"`, time.Date(2019, 7, 31, 0, 47, 46, 221e6, time.UTC), false},
		{"positive offset", `"20190730-17:47:46.221-+0530"`, time.Date(2019, 7, 30, 12, 17, 46, 221e6, time.UTC), false},
		{"rfc3339", `"2019-07-30T17:47:46Z"`, time.Date(2019, 7, 30, 17, 47, 46, 0, time.UTC), false},
		{"garbage string", `"last tuesday"`, time.Time{}, true},
		{"object", `{"x": 1}`, time.Time{}, true},
		{"null", `null`, time.Time{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := `{"policies": [{"id": 1, "updateTime": ` + tc.value + `}], "policyUpdateTime": ` + tc.value + `}`
			sp, err := ParseServicePolicies([]byte(doc))
			if err != nil {
				t.Fatalf("a date must never fail a document: %v", err)
			}
			got := sp.Policies[0].UpdateTime.Time
			if tc.isZero {
				if !got.IsZero() {
					t.Errorf("got %v, want zero", got)
				}
				return
			}
			if !got.Equal(tc.want) {
				t.Errorf("got %v, want %v", got.UTC(), tc.want)
			}
			if !sp.PolicyUpdateTime.Time.Equal(tc.want) {
				t.Errorf("policyUpdateTime %v, want %v", sp.PolicyUpdateTime.Time.UTC(), tc.want)
			}
		})
	}
}

func TestParseServiceTagsDecimalIDKeys(t *testing.T) {
	doc := `{
	  "serviceName": "cm_hive", "tagVersion": 7,
	  "tagDefinitions": {"1": {"id": 1, "name": "PII", "attributeDefs": [{"name": "expiry", "type": "date"}]}},
	  "tags": {"10": {"id": 10, "type": "PII", "attributes": {"expiry": "2099/12/31", "level": 3}}},
	  "serviceResources": [{"id": 5, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["orders"]}}}],
	  "resourceToTagIds": {"5": [10]}
	}`
	st, err := ParseServiceTags([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if st.TagVersion != 7 {
		t.Errorf("tagVersion = %d", st.TagVersion)
	}
	if st.Tags[10].Type != "PII" || st.Tags[10].Attributes["level"] != "3" {
		t.Errorf("tags = %+v", st.Tags)
	}
	if ids := st.ResourceToTagIDs[5]; len(ids) != 1 || ids[0] != 10 {
		t.Errorf("resourceToTagIds = %v", st.ResourceToTagIDs)
	}
	if st.TagDefinitions[1].AttributeDefs[0].Type != "date" {
		t.Errorf("tagDefinitions = %+v", st.TagDefinitions)
	}
	if st.ServiceResources[0].ResourceElements["table"].Values[0] != "orders" {
		t.Errorf("serviceResources = %+v", st.ServiceResources)
	}

	if _, err := ParseServiceTags([]byte(`{"tags": {"abc": {"type": "PII"}}}`)); err == nil {
		t.Errorf("a non-numeric id key must be an error")
	}
}

func TestParseRolesAndUserStore(t *testing.T) {
	roles, err := ParseRoles([]byte(`{"serviceName": "s", "roleVersion": 3, "rangerRoles": [
	  {"name": "r1", "users": [{"name": "alice", "isAdmin": true}], "groups": [{"name": "g"}], "roles": [{"name": "r2"}]},
	  {"name": "r2", "isEnabled": false}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	if roles.RoleVersion != 3 || len(roles.RangerRoles) != 2 {
		t.Fatalf("roles = %+v", roles)
	}
	if !roles.RangerRoles[0].IsEnabled || roles.RangerRoles[1].IsEnabled {
		t.Errorf("isEnabled defaults wrong: %+v", roles.RangerRoles)
	}
	if roles.RangerRoles[0].Users[0].Name != "alice" || roles.RangerRoles[0].Roles[0].Name != "r2" {
		t.Errorf("members = %+v", roles.RangerRoles[0])
	}
	r, err := ParseRoles([]byte(`{}`))
	if err != nil || r.RoleVersion != -1 {
		t.Errorf("empty roles: %v %+v", err, r)
	}

	us, err := ParseUserStore([]byte(`{"userStoreVersion": 4,
	  "userAttrMapping": {"alice": {"dept": "engg", "level": 7}},
	  "groupAttrMapping": {"analysts": {"region": "EU"}},
	  "userGroupMapping": {"alice": ["analysts"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if us.UserStoreVersion != 4 || us.UserAttrMapping["alice"]["dept"] != "engg" || us.UserAttrMapping["alice"]["level"] != "7" {
		t.Errorf("user store = %+v", us)
	}
	if us.GroupAttrMapping["analysts"]["region"] != "EU" || us.UserGroupMapping["alice"][0] != "analysts" {
		t.Errorf("user store = %+v", us)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		wantSub string
	}{
		{"empty", ``, "empty document"},
		{"whitespace", "  \n ", "empty document"},
		{"not json", `<html>503</html>`, "not JSON"},
		{"truncated", `{"policies": [`, "line 1"},
		{"syntax error", "{\n\"policies\": [}\n", "line 2"},
		{"array document", `[]`, "must be a JSON object"},
		{"null document", `null`, "must be a JSON object"},
		{"string document", `"x"`, "must be a JSON object"},
		{"policies not an array", `{"policies": {"id": 1}}`, `"policies"`},
		{"policy id a string", `{"policies": [{"id": "one"}]}`, "id"},
		{"resources wrong shape", `{"policies": [{"id": 1, "resources": []}]}`, "resources"},
		{"trailing garbage", `{"policies": []} x`, "invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseServicePolicies([]byte(tc.doc))
			if err == nil {
				t.Fatalf("expected an error")
			}
			if !strings.Contains(err.Error(), tc.wantSub) {
				t.Errorf("error %q does not mention %q", err, tc.wantSub)
			}
			if !strings.HasPrefix(err.Error(), "ranger: service policies:") {
				t.Errorf("error %q does not name the document", err)
			}
		})
	}
	if _, err := ParseRoles([]byte(`{"rangerRoles": "r1"}`)); err == nil || !strings.Contains(err.Error(), "rangerRoles") {
		t.Errorf("roles wrong shape: %v", err)
	}
	if _, err := ParseUserStore([]byte(`{"userAttrMapping": []}`)); err == nil {
		t.Errorf("user store wrong shape: no error")
	}
}

// The conformance fixtures are Ranger's own JSON; every one must read.
func TestParseConformanceFixtures(t *testing.T) {
	dir := testrepo.Shared(t, "ranger", "conformance")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		testrepo.MissingShared(t, filepath.Join(dir, "*.json"))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := ParseServicePolicies(data)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if sp.ServiceDef == nil || len(sp.ServiceDef.Resources) == 0 {
			t.Errorf("%s: serviceDef not read", filepath.Base(f))
		}
	}
}
