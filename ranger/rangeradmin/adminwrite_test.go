package rangeradmin_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
	"github.com/pgranger/pgranger/ranger/rangertest"
)

// writeServer is a fake Ranger with users, a delegated admin (alice on
// sales.*) and pgranger's account listed in policy.grantrevoke.auth.users,
// as HiveServer2's principal is.
func writeServer(t *testing.T) *rangertest.Server {
	t.Helper()
	s := newServer(t)
	s.SetDocument(rangeradmin.DocPolicies, []byte(`{"serviceName":"cm_hive","policyVersion":7,"policies":[
	  {"id":1,"name":"sales admin","isEnabled":true,"resources":{"database":{"values":["sales"]},"table":{"values":["*"]},"column":{"values":["*"]}},
	   "policyItems":[{"users":["alice"],"accesses":[{"type":"select","isAllowed":true}],"delegateAdmin":true}]}]}`))
	if err := s.SetUsers(map[string][]string{"alice": {"admins"}, "carol": {"support"}, "bob": {"analysts"}}); err != nil {
		t.Fatal(err)
	}
	s.SetGrantRevokeUsers(user)
	return s
}

func TestGrantAndRevokeThroughTheSecureEndpoints(t *testing.T) {
	s := writeServer(t)
	c := newClient(t, nil, s.URL())
	ctx := context.Background()
	var sent []string
	octx := rangeradmin.WithObserver(ctx, func(method, path string, body []byte, status int) {
		sent = append(sent, fmt.Sprintf("%s %s %d", method, path, status))
	})
	req := &ranger.GrantRevokeRequest{Grantor: "alice", GrantorGroups: []string{"admins"},
		Resource: map[string]string{"database": "sales", "table": "orders", "column": "*"}, Users: []string{"carol"}, AccessTypes: []string{"select"}, EnableAudit: true}
	if err := c.Grant(octx, req); err != nil {
		t.Fatal(err)
	}
	if strings.Join(sent, ";") != "POST /service/plugins/secure/services/grant/cm_hive 200" {
		t.Errorf("sent %v", sent)
	}
	sp, _ := s.Policies()
	p := sp.Policies[len(sp.Policies)-1]
	if !strings.HasPrefix(p.Name, "grant-") || p.Description != "created by grant" || sp.PolicyVersion != 8 {
		t.Fatalf("after the grant: %+v (version %d)", p, sp.PolicyVersion)
	}
	// The download serves the new version.
	doc, err := c.Download(ctx, rangeradmin.DocPolicies)
	if err != nil || doc.(*ranger.ServicePolicies).PolicyVersion != 8 {
		t.Fatalf("download: %v", err)
	}

	var we *ranger.WriteError
	bobReq := *req
	bobReq.Grantor = "bob"
	if err := c.Grant(ctx, &bobReq); !errors.As(err, &we) || we.Status != 403 || we.Message != "User doesn't have necessary permission to grant access" {
		t.Errorf("bob without delegated admin: %v", err)
	}
	bobReq.Users = []string{"mallory"}
	bobReq.Grantor = "alice"
	if err := c.Grant(ctx, &bobReq); !errors.As(err, &we) || we.Message != "Grantee user mallory doesn't exist" {
		t.Errorf("unknown grantee: %v", err)
	}
	// Another account may not speak for a grantor unless it is listed.
	s.SetGrantRevokeUsers()
	if err := c.Grant(ctx, req); !errors.As(err, &we) || we.Message != "Invalid grant/revoke request - contains grantor or userOwner specification" {
		t.Errorf("grantor specification: %v", err)
	}
	s.SetGrantRevokeUsers(user)
	// A revoke with no exact match is a silent 200 and changes nothing.
	rv := *req
	rv.Resource = map[string]string{"database": "sales", "table": "customers", "column": "*"}
	if err := c.Revoke(ctx, &rv); err != nil {
		t.Fatal(err)
	}
	if sp, _ := s.Policies(); sp.PolicyVersion != 8 {
		t.Errorf("a silent revoke bumped the version to %d", sp.PolicyVersion)
	}
}

func TestPublicPolicyAPI(t *testing.T) {
	s := writeServer(t)
	s.AddAccount("admin", "admin-pw", true)
	c := newClient(t, func(cfg *rangeradmin.AdminClientConfig) {
		cfg.User, cfg.Password = "admin", func() (string, error) { return "admin-pw", nil }
	}, s.URL())
	ctx := context.Background()
	for i := 0; i < 410; i++ {
		p := &ranger.RangerPolicy{Name: fmt.Sprintf("p%03d", i), IsEnabled: true, Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"db"}}, "table": {Values: []string{fmt.Sprintf("t%d", i)}}, "column": {Values: []string{"*"}}},
			PolicyItems: []ranger.RangerPolicyItem{{Users: []string{"bob"}, Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}}}}
		if _, err := c.CreatePolicy(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	all, err := c.ListPolicies(ctx)
	if err != nil || len(all) != 411 || s.PageRequests() != 3 {
		t.Fatalf("list: %d policies in %d pages, %v", len(all), s.PageRequests(), err)
	}
	var we *ranger.WriteError
	dup := all[5]
	dup.Name = "other"
	if _, err := c.CreatePolicy(ctx, &dup); !errors.As(err, &we) || we.Status != 400 || we.Code != ranger.ErrCodeResourceConflict {
		t.Errorf("same resources: %v", err)
	}
	dup = all[5]
	dup.Resources = map[string]ranger.RangerPolicyResource{"database": {Values: []string{"elsewhere"}}}
	if _, err := c.CreatePolicy(ctx, &dup); !errors.As(err, &we) || we.Code != ranger.ErrCodeNameConflict {
		t.Errorf("same name: %v", err)
	}
	p, err := c.Policy(ctx, "p007")
	if err != nil || p == nil {
		t.Fatalf("get: %v", err)
	}
	p.Description, p.Version = "edited", 1 // a stale version: Ranger does not check it
	up, err := c.UpdatePolicy(ctx, "p007", p)
	if err != nil || up.Description != "edited" || up.Version != 2 {
		t.Fatalf("update: %+v %v", up, err)
	}
	if err := c.DeletePolicy(ctx, "p007"); err != nil {
		t.Fatal(err)
	}
	if p, err := c.Policy(ctx, "p007"); p != nil || err != nil {
		t.Errorf("after delete: %v %v", p, err)
	}
	if err := c.DeletePolicy(ctx, "p007"); !errors.As(err, &we) || we.Status != 404 {
		t.Errorf("delete twice: %v", err)
	}
	// A writer that is no admin needs delegated admin on the resources.
	s.AddAccount("bob", "bob-pw", false)
	bc := newClient(t, func(cfg *rangeradmin.AdminClientConfig) {
		cfg.User, cfg.Password = "bob", func() (string, error) { return "bob-pw", nil }
	}, s.URL())
	mask := &ranger.RangerPolicy{Name: "mask", IsEnabled: true, PolicyType: ranger.PolicyTypeDataMask, Resources: map[string]ranger.RangerPolicyResource{
		"database": {Values: []string{"sales"}}, "table": {Values: []string{"orders"}}, "column": {Values: []string{"ssn"}}}}
	if _, err := bc.CreatePolicy(ctx, mask); !errors.As(err, &we) || we.Status != 403 || we.Message != "User 'bob' does not have delegated-admin privilege on given resources" {
		t.Errorf("bob's mask: %v", err)
	}
}

func TestTagImportReplacesTheResourceSet(t *testing.T) {
	s := writeServer(t)
	s.AddAccount("admin", "admin-pw", true)
	c := newClient(t, func(cfg *rangeradmin.AdminClientConfig) {
		cfg.User, cfg.Password = "admin", func() (string, error) { return "admin-pw", nil }
	}, s.URL())
	ctx := context.Background()
	col := map[string]ranger.RangerPolicyResource{"database": {Values: []string{"sales"}}, "table": {Values: []string{"orders"}}, "column": {Values: []string{"ssn"}}}
	if err := c.ImportTags(ctx, ranger.TagPayload(svc, col, []ranger.RangerTag{{Type: "PII"}, {Type: "GDPR"}})); err != nil {
		t.Fatal(err)
	}
	if err := c.ImportTags(ctx, ranger.TagPayload(svc, col, []ranger.RangerTag{{Type: "GDPR"}})); err != nil {
		t.Fatal(err)
	}
	st, _ := s.Tags()
	if got := ranger.TagTypes(st.ResourceTags(col)); strings.Join(got, ",") != "GDPR" || st.TagVersion != 5 {
		t.Errorf("tags %v version %d", got, st.TagVersion)
	}
	// pgranger's download account is no admin: the tag import is refused.
	var we *ranger.WriteError
	if err := newClient(t, nil, s.URL()).ImportTags(ctx, ranger.TagPayload(svc, col, nil)); !errors.As(err, &we) || we.Status != 403 {
		t.Errorf("tags by a non-admin: %v", err)
	}
}

// A role created through the public API is in the next roles download,
// with the version raised; a role named in a grant must exist.
func TestRolesAndVersionBumpsAreDownloaded(t *testing.T) {
	s := writeServer(t)
	s.AddAccount("admin", "admin-pw", true)
	ctx := context.Background()
	c := newClient(t, nil, s.URL())
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/service/public/v2/api/roles", strings.NewReader(`{"name":"auditor","users":[{"name":"carol"}]}`))
	req.SetBasicAuth("admin", "admin-pw")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("create role: %v %v", resp, err)
	}
	resp.Body.Close()
	doc, err := c.Download(ctx, rangeradmin.DocRoles)
	if err != nil {
		t.Fatal(err)
	}
	if r := doc.(*ranger.RangerRoles); r.RoleVersion != 5 || len(r.RangerRoles) != 2 || r.RangerRoles[1].Name != "auditor" {
		t.Errorf("roles download: %+v", r)
	}
	grant := &ranger.GrantRevokeRequest{Grantor: "alice", Resource: map[string]string{"database": "sales", "table": "orders", "column": "*"},
		Roles: []string{"auditor"}, AccessTypes: []string{"select"}}
	if err := c.Grant(ctx, grant); err != nil {
		t.Fatalf("grant to a role that exists: %v", err)
	}
	grant.Roles = []string{"nobody"}
	var we *ranger.WriteError
	if err := c.Grant(ctx, grant); !errors.As(err, &we) || we.Message != "Grantee role nobody doesn't exist" {
		t.Errorf("grant to a role that does not: %v", err)
	}
	// The tag import's version bump is what the tag download serves.
	admin := newClient(t, func(cfg *rangeradmin.AdminClientConfig) {
		cfg.User, cfg.Password = "admin", func() (string, error) { return "admin-pw", nil }
	}, s.URL())
	col := map[string]ranger.RangerPolicyResource{"database": {Values: []string{"sales"}}, "table": {Values: []string{"orders"}}}
	if err := admin.ImportTags(ctx, ranger.TagPayload(svc, col, []ranger.RangerTag{{Type: "PII"}})); err != nil {
		t.Fatal(err)
	}
	tags, err := c.Download(ctx, rangeradmin.DocTags)
	if err != nil {
		t.Fatal(err)
	}
	if st := tags.(*ranger.ServiceTags); st.TagVersion != 4 || strings.Join(ranger.TagTypes(st.ResourceTags(col)), ",") != "PII" {
		t.Errorf("tags download: version %d", st.TagVersion)
	}
}
