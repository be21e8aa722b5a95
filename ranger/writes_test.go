package ranger

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func res(db, table, col string) map[string]RangerPolicyResource {
	return map[string]RangerPolicyResource{"database": {Values: []string{db}}, "table": {Values: []string{table}}, "column": {Values: []string{col}}}
}

func allow(groups []string, users []string, admin bool, access ...string) RangerPolicyItem {
	it := RangerPolicyItem{Groups: groups, Users: users, DelegateAdmin: admin}
	for _, a := range access {
		it.Accesses = append(it.Accesses, RangerPolicyItemAccess{Type: a, IsAllowed: true})
	}
	return it
}

func samplePolicies() *ServicePolicies {
	return &ServicePolicies{ServiceName: "hive", PolicyVersion: 7, Policies: []RangerPolicy{
		{ID: 1, Name: "sales all", IsEnabled: true, Resources: res("sales", "*", "*"),
			PolicyItems: []RangerPolicyItem{allow([]string{"analysts"}, nil, false, "select")}},
		{ID: 2, Name: "orders", IsEnabled: true, Resources: res("sales", "orders", "*"),
			PolicyItems: []RangerPolicyItem{allow([]string{"analysts"}, nil, false, "select"), allow(nil, []string{"alice"}, true, "select", "update")}},
		{ID: 3, Name: "orders disabled", IsEnabled: false, Resources: res("sales", "items", "*"),
			PolicyItems: []RangerPolicyItem{allow([]string{"support"}, nil, false, "select")}},
	}}
}

func itemsJSON(items []RangerPolicyItem) string {
	var parts []string
	for _, it := range items {
		var acc []string
		for _, a := range it.Accesses {
			acc = append(acc, a.Type)
		}
		s := "users=" + strings.Join(it.Users, ",") + " groups=" + strings.Join(it.Groups, ",") + " roles=" + strings.Join(it.Roles, ",") +
			" accesses=" + strings.Join(acc, ",")
		if it.DelegateAdmin {
			s += " admin"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " | ")
}

// The grant and revoke semantics of docs/authoring.md, case by case, as
// Ranger Admin applies them (ServiceRESTUtil).
func TestGrantRevokeSemantics(t *testing.T) {
	for _, tc := range []struct {
		name        string
		grant       bool
		req         GrantRevokeRequest
		wantPolicy  string // name of the policy changed or created ("" = none)
		wantCreated bool
		wantChanged bool // revoke
		wantItems   string
		wantErr     string
	}{
		{name: "grant merges into the exact match; equal access sets share an item", grant: true,
			req:        GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "orders", "column": "*"}, Users: []string{"carol"}, AccessTypes: []string{"select"}},
			wantPolicy: "orders",
			wantItems:  "users=carol groups=analysts roles= accesses=select | users=alice groups= roles= accesses=select,update admin"},
		{name: "grant with the grant option adds delegated admin", grant: true,
			req:        GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "orders", "column": "*"}, Groups: []string{"analysts"}, AccessTypes: []string{"update"}, DelegateAdmin: true},
			wantPolicy: "orders",
			wantItems:  "users=alice groups=analysts roles= accesses=select,update admin"},
		{name: "a broader policy is not an exact match: a grant-<millis> policy is created", grant: true,
			req:        GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "customers", "column": "*"}, Roles: []string{"auditor"}, AccessTypes: []string{"select"}},
			wantPolicy: "grant-1772366400000", wantCreated: true,
			wantItems: "users= groups= roles=auditor accesses=select"},
		{name: "a disabled policy is not an exact match", grant: true,
			req:        GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "items", "column": "*"}, Groups: []string{"support"}, AccessTypes: []string{"select"}},
			wantPolicy: "grant-1772366400000", wantCreated: true,
			wantItems: "users= groups=support roles= accesses=select"},
		{name: "columns given as a,b are two values", grant: true,
			req:        GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "orders", "column": "id,region"}, Users: []string{"carol"}, AccessTypes: []string{"select"}},
			wantPolicy: "grant-1772366400000", wantCreated: true,
			wantItems: "users=carol groups= roles= accesses=select"},
		{name: "no grantee is Ranger's 403", grant: true,
			req:     GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "orders", "column": "*"}, AccessTypes: []string{"select"}},
			wantErr: "HTTP 403: Grantee users/groups/roles list is empty"},
		{name: "revoke removes the access; an empty item goes",
			req:        GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "orders", "column": "*"}, Groups: []string{"analysts"}, AccessTypes: []string{"select"}},
			wantPolicy: "orders", wantChanged: true,
			wantItems: "users=alice groups= roles= accesses=select,update admin"},
		{name: "revoke keeps delegated admin unless asked",
			req:        GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "orders", "column": "*"}, Users: []string{"alice"}, AccessTypes: []string{"select", "update"}},
			wantPolicy: "orders", wantChanged: true,
			wantItems: "users= groups=analysts roles= accesses=select | users=alice groups= roles= accesses= admin"},
		{name: "revoke with no exact match changes nothing, silently",
			req:        GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "customers", "column": "*"}, Groups: []string{"analysts"}, AccessTypes: []string{"select"}},
			wantPolicy: ""},
		{name: "revoke of what the principal does not hold changes nothing",
			req:        GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "orders", "column": "*"}, Users: []string{"carol"}, AccessTypes: []string{"select"}},
			wantPolicy: "orders", wantChanged: false,
			wantItems: "users= groups=analysts roles= accesses=select | users=alice groups= roles= accesses=select,update admin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := samplePolicies()
			var p *RangerPolicy
			var created, changed bool
			var err error
			if tc.grant {
				p, created, err = sp.ApplyGrant(&tc.req, t0)
			} else {
				p, changed, err = sp.ApplyRevoke(&tc.req, t0)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantPolicy == "" {
				if p != nil {
					t.Fatalf("changed policy %q, want none", p.Name)
				}
				return
			}
			if p == nil || p.Name != tc.wantPolicy || created != tc.wantCreated || changed != tc.wantChanged {
				t.Fatalf("policy %v created=%t changed=%t, want %q created=%t changed=%t", p, created, changed, tc.wantPolicy, tc.wantCreated, tc.wantChanged)
			}
			if got := itemsJSON(p.PolicyItems); got != tc.wantItems {
				t.Errorf("items:\n got %s\nwant %s", got, tc.wantItems)
			}
			if created && (p.Description != "created by grant" || p.ID != 4 || p.Version != 1 || p.CreatedBy != "alice") {
				t.Errorf("created policy: %+v", p)
			}
		})
	}
}

func TestCreateUpdateDeleteRules(t *testing.T) {
	sp := samplePolicies()
	var we *WriteError
	_, err := sp.CreatePolicy(RangerPolicy{Name: "orders", IsEnabled: true, Resources: res("x", "y", "z")}, t0)
	if !errors.As(err, &we) || we.Code != ErrCodeNameConflict || we.Status != 400 ||
		we.Message != "(0) Validation failure: error code[3006], reason[Another policy already exists for this name: policy-name=[orders], service=[hive]], field[name], input[null], type[semantically incorrect] " {
		t.Errorf("name conflict: %v", err)
	}
	_, err = sp.CreatePolicy(RangerPolicy{Name: "again", IsEnabled: true, Resources: res("sales", "orders", "*")}, t0)
	if !errors.As(err, &we) || we.Code != ErrCodeResourceConflict || !strings.Contains(we.Message, "Another policy already exists for matching resource: policy-name=[orders], service=[hive]") {
		t.Errorf("signature conflict: %v", err)
	}
	// A disabled policy conflicts with nothing; a mask policy not with an access one.
	if _, err := sp.CreatePolicy(RangerPolicy{Name: "off", IsEnabled: false, Resources: res("sales", "orders", "*")}, t0); err != nil {
		t.Errorf("disabled twin: %v", err)
	}
	if _, err := sp.CreatePolicy(RangerPolicy{Name: "mask", IsEnabled: true, PolicyType: PolicyTypeDataMask, Resources: res("sales", "orders", "*")}, t0); err != nil {
		t.Errorf("mask beside access: %v", err)
	}
	p, err := sp.UpdatePolicy("orders", RangerPolicy{Name: "orders", IsEnabled: true, Version: 1, Resources: res("sales", "orders", "*"), Description: "new"}, "bob", t0)
	if err != nil || p.ID != 2 || p.Version != 1 || p.Description != "new" || p.UpdatedBy != "bob" {
		t.Errorf("update: %+v %v (the client's version is ignored: the stored one rises)", p, err)
	}
	if _, err := sp.UpdatePolicy("nope", RangerPolicy{}, "bob", t0); !errors.As(err, &we) || we.Status != 404 {
		t.Errorf("update of a missing policy: %v", err)
	}
	if _, err := sp.UpdatePolicy("orders", RangerPolicy{Name: "sales all", IsEnabled: true, Resources: res("a", "b", "c")}, "bob", t0); !errors.As(err, &we) || we.Code != ErrCodeNameConflict {
		t.Errorf("rename onto a taken name: %v", err)
	}
	if err := sp.DeletePolicy("orders"); err != nil || sp.PolicyByName("orders") != nil {
		t.Errorf("delete: %v", err)
	}
	if err := sp.DeletePolicy("orders"); !errors.As(err, &we) || we.Status != 404 {
		t.Errorf("delete twice: %v", err)
	}
}

func TestSetResourceTags(t *testing.T) {
	st := &ServiceTags{ServiceName: "hive", TagVersion: 3}
	col := map[string]RangerPolicyResource{"database": {Values: []string{"sales"}}, "table": {Values: []string{"orders"}}, "column": {Values: []string{"ssn"}}}
	if !st.SetResourceTags("hive", col, []RangerTag{{Type: "PII", Attributes: StringMap{"level": "high"}}}, t0) {
		t.Fatal("first tag: no change")
	}
	pii := st.ResourceTags(col)
	// The whole set is sent: PII is kept with its attributes, GDPR added.
	st.SetResourceTags("hive", col, []RangerTag{pii[0], {Type: "GDPR"}}, t0)
	got := st.ResourceTags(col)
	if len(got) != 2 || got[0].Type != "PII" || got[0].Attributes["level"] != "high" || got[0].ID != pii[0].ID || got[1].Type != "GDPR" {
		t.Fatalf("tags after the second label: %+v", got)
	}
	if st.SetResourceTags("hive", col, got, t0) {
		t.Error("the same set again is a change")
	}
	// A smaller set replaces: GDPR only; the PII tag no resource uses is gone.
	st.SetResourceTags("hive", col, []RangerTag{{Type: "GDPR"}}, t0)
	if got := TagTypes(st.ResourceTags(col)); strings.Join(got, ",") != "GDPR" || len(st.Tags) != 1 {
		t.Errorf("after replace: %v, %d tags", got, len(st.Tags))
	}
	// An empty list deletes the resource.
	st.SetResourceTags("hive", col, nil, t0)
	if len(st.ServiceResources) != 0 || len(st.Tags) != 0 || len(st.ResourceToTagIDs) != 0 {
		t.Errorf("after delete: %+v", st)
	}
	if len(st.TagDefinitions) != 2 {
		t.Errorf("tag definitions are created and never removed: %+v", st.TagDefinitions)
	}
}

func TestMarshalDocumentIsRangersShape(t *testing.T) {
	sp := &ServicePolicies{ServiceName: "hive", PolicyVersion: 2, AuditMode: AuditModeDefault, Policies: []RangerPolicy{
		{ID: 1, Name: "p", IsEnabled: true, Resources: res("a", "b", "c"), PolicyItems: []RangerPolicyItem{allow(nil, []string{"u"}, false, "select")},
			RowFilterPolicyItems: []RangerRowFilterPolicyItem{{RowFilterInfo: &RangerPolicyItemRowFilterInfo{FilterExpr: "x < 1 && y > 2"}}}},
	}}
	out, err := MarshalDocument(sp)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, absent := range []string{`"guid"`, `"createTime"`, `"denyPolicyItems"`, `null`, `""`} {
		if strings.Contains(s, absent) {
			t.Errorf("%s should be left out:\n%s", absent, s)
		}
	}
	for _, present := range []string{`"isAuditEnabled": false`, `"filterExpr": "x < 1 && y > 2"`, "\n  \"policies\": ["} {
		if !strings.Contains(s, present) {
			t.Errorf("want %s in:\n%s", present, s)
		}
	}
	back, err := ParseServicePolicies(out)
	if err != nil || back.Policies[0].RowFilterPolicyItems[0].RowFilterInfo.FilterExpr != "x < 1 && y > 2" {
		t.Fatalf("round trip: %v", err)
	}
	again, _ := MarshalDocument(back)
	if string(again) != s {
		t.Errorf("not stable:\n%s\n%s", s, again)
	}
}

func TestFileStoreWritesAtomicallyAndBumps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hive.json")
	raw, _ := json.Marshal(samplePolicies())
	os.WriteFile(path, raw, 0o600)
	fs := NewFileStore(FilePaths{Policies: path})
	fs.now = func() time.Time { return t0 }
	sp, err := fs.UpdatePolicies(func(sp *ServicePolicies, now time.Time) (bool, error) {
		_, _, err := sp.ApplyGrant(&GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "t", "column": "*"},
			Users: []string{"carol"}, AccessTypes: []string{"select"}}, now)
		return true, err
	})
	if err != nil || sp.PolicyVersion != 8 {
		t.Fatalf("version %d, %v", sp.PolicyVersion, err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", st.Mode().Perm())
	}
	again, err := fs.Policies()
	if err != nil || again.PolicyVersion != 8 || again.PolicyByName("grant-1772366400000") == nil {
		t.Fatalf("read back: %v", err)
	}
	// Nothing changed: nothing written, no bump.
	sp, _ = fs.UpdatePolicies(func(*ServicePolicies, time.Time) (bool, error) { return false, nil })
	if sp.PolicyVersion != 8 {
		t.Errorf("an unchanged document was bumped to %d", sp.PolicyVersion)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if _, err := fs.Tags(); !errors.Is(err, ErrNoTagFile) {
		t.Errorf("tags without a tag file: %v", err)
	}
}
