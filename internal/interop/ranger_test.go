package interop

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// smokeBundle reads testdata/smoke: access, mask (MASK_SHOW_LAST_4,
// MASK_NONE, CUSTOM with ${{USER.dept}}), row filter and tag-mask policies,
// tags, roles and a user store, with the stock hive service-def.
func smokeBundle(t *testing.T) *ranger.Bundle {
	t.Helper()
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("testdata", "smoke", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	sp, err := ranger.ParseServicePolicies(read("policies.json"))
	if err != nil {
		t.Fatal(err)
	}
	sp.ServiceDef = policy.StockHiveServiceDef()
	tags, err := ranger.ParseServiceTags(read("tags.json"))
	if err != nil {
		t.Fatal(err)
	}
	roles, err := ranger.ParseRoles(read("roles.json"))
	if err != nil {
		t.Fatal(err)
	}
	us, err := ranger.ParseUserStore(read("userstore.json"))
	if err != nil {
		t.Fatal(err)
	}
	return &ranger.Bundle{Policies: sp, Tags: tags, Roles: roles, UserStore: us}
}

func col(db, table, column string) map[string][]string {
	r := map[string][]string{"database": {db}, "table": {table}}
	if column != "" {
		r["column"] = []string{column}
	}
	return r
}

// TestRangerOracleSmoke loads a bundle through the same documents pgranger
// reads and checks Ranger's exact answers: access with users, groups,
// roles from RangerRoles and a deny item, names in another case, `_any`;
// masks from resource and tag policies (the tag service-def's hive:
// prefix stripped, ServiceTags applied), MASK_NONE, CUSTOM and the row
// filter with ${{USER.dept}} expanded from the user store.
func TestRangerOracleSmoke(t *testing.T) {
	r := RangerForTest(t, "")
	ctx := context.Background()
	lr, err := r.Load(ctx, smokeBundle(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (LoadResult{PolicyVersion: 7, TagEnricherAdded: true, TagEnricher: true, UserStoreEnricher: true}); lr != want {
		t.Fatalf("load: got %+v, want %+v", lr, want)
	}

	analysts := []string{"analysts"}
	access := []struct {
		name string
		q    Request
		want AccessResult
	}{
		{"user item", Request{Resource: col("hr", "employees", "ssn"), AccessType: "select", User: "alice"},
			AccessResult{Allowed: true, Determined: true, Audited: true, PolicyID: 1}},
		{"group item", Request{Resource: col("hr", "employees", "ssn"), AccessType: "select", User: "dan", Groups: analysts},
			AccessResult{Allowed: true, Determined: true, Audited: true, PolicyID: 1}},
		{"role from RangerRoles", Request{Resource: col("hr", "employees", "ssn"), AccessType: "select", User: "carol"},
			AccessResult{Allowed: true, Determined: true, Audited: true, PolicyID: 1}},
		{"deny item beats the group", Request{Resource: col("hr", "employees", "ssn"), AccessType: "select", User: "mallory", Groups: analysts},
			AccessResult{Allowed: false, Determined: true, Audited: true, PolicyID: 1}},
		{"nobody", Request{Resource: col("hr", "employees", "ssn"), AccessType: "select", User: "eve"},
			AccessResult{Allowed: false, Determined: true, Audited: true, PolicyID: -1}},
		{"names ignore case", Request{Resource: col("HR", "Employees", "SSN"), AccessType: "select", User: "alice"},
			AccessResult{Allowed: true, Determined: true, Audited: true, PolicyID: 1}},
		{"no update grant", Request{Resource: col("hr", "employees", "ssn"), AccessType: "update", User: "alice"},
			AccessResult{Allowed: false, Determined: true, Audited: true, PolicyID: -1}},
		{"_any below the database", Request{Resource: map[string][]string{"database": {"hr"}}, AccessType: "_any", User: "alice",
			ResourceMatchingScope: "SELF_OR_DESCENDANTS"},
			AccessResult{Allowed: true, Determined: true, Audited: true, PolicyID: 1}},
	}
	for _, c := range access {
		got, err := r.Access(ctx, c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got.Reason, got.Priority = "", 0
		if got != c.want {
			t.Errorf("access %s: got %+v, want %+v", c.name, got, c.want)
		}
	}

	masks := []struct {
		name string
		q    Request
		want MaskResult
	}{
		{"show last 4", Request{Resource: col("hr", "employees", "ssn"), User: "alice", Groups: analysts},
			MaskResult{MaskEnabled: true, MaskType: "MASK_SHOW_LAST_4", Transformer: "mask_show_last_n({col}, 4, 'x', 'x', 'x', -1, '1')", PolicyID: 2, Audited: true}},
		{"MASK_NONE item first", Request{Resource: col("hr", "employees", "ssn"), User: "bob", Groups: analysts},
			MaskResult{MaskEnabled: false, MaskType: "MASK_NONE", PolicyID: 2, Audited: true}},
		{"CUSTOM with the user store", Request{Resource: col("hr", "employees", "name"), User: "alice", Groups: analysts},
			MaskResult{MaskEnabled: true, MaskType: "CUSTOM", MaskedValue: "CASE WHEN 'hr' = 'hr' THEN {col} ELSE 'x' END", PolicyID: 3, Audited: true}},
		{"CUSTOM, another department", Request{Resource: col("hr", "employees", "name"), User: "dan", Groups: analysts},
			MaskResult{MaskEnabled: true, MaskType: "CUSTOM", MaskedValue: "CASE WHEN 'sales' = 'hr' THEN {col} ELSE 'x' END", PolicyID: 3, Audited: true}},
		{"tag mask from ServiceTags", Request{Resource: col("hr", "employees", "email"), User: "alice", Groups: analysts},
			MaskResult{MaskEnabled: true, MaskType: "MASK_HASH", Transformer: "mask_hash({col})", PolicyID: 10, Audited: true}},
		{"no mask", Request{Resource: col("hr", "employees", "salary"), User: "alice", Groups: analysts},
			MaskResult{PolicyID: -1}},
	}
	for _, c := range masks {
		got, err := r.Mask(ctx, c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("mask %s: got %+v, want %+v", c.name, got, c.want)
		}
	}

	rf, err := r.RowFilter(ctx, Request{Resource: col("hr", "employees", ""), User: "dan", Groups: analysts})
	if err != nil {
		t.Fatal(err)
	}
	if want := (RowFilterResult{FilterEnabled: true, FilterExpr: "dept = 'sales'", PolicyID: 4, Audited: true}); rf != want {
		t.Errorf("row filter: got %+v, want %+v", rf, want)
	}

	// Ranger (2.6.0 and 2.9.0) cannot evaluate ${{…}} for a user in a group
	// when the user store has no groupAttrMapping at all: it throws.
	b := smokeBundle(t)
	b.UserStore.GroupAttrMapping = nil
	if _, err := r.Load(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	_, err = r.Mask(ctx, Request{Resource: col("hr", "employees", "name"), User: "alice", Groups: analysts})
	var oe *OracleError
	if !errors.As(err, &oe) || oe.Message != `java.lang.NullPointerException: Cannot invoke "java.util.Map.get(Object)" because "groupAttrMapping" is null` {
		t.Errorf("user store without groupAttrMapping: got %v", err)
	}
}

// TestRangerOracleErrors: a request the oracle cannot answer comes back as
// an *OracleError and the oracle goes on answering.
func TestRangerOracleErrors(t *testing.T) {
	r := RangerForTest(t, "")
	ctx := context.Background()
	var oe *OracleError

	_, err := r.Access(ctx, Request{Resource: col("hr", "t", ""), AccessType: "select", User: "u"})
	if !errors.As(err, &oe) || !strings.Contains(oe.Message, "no policies loaded") {
		t.Fatalf("access before load: got %v", err)
	}
	_, err = r.Load(ctx, &ranger.Bundle{Policies: &ranger.ServicePolicies{ServiceName: "x"}}, nil)
	if !errors.As(err, &oe) || !strings.Contains(oe.Message, "servicePolicies has no serviceDef") {
		t.Fatalf("load without a service-def: got %v", err)
	}
	if _, err := r.Load(ctx, smokeBundle(t), nil); err != nil {
		t.Fatalf("load after errors: %v", err)
	}
	err = r.p.call(ctx, map[string]any{"op": "access", "accessType": "select", "user": "u"}, &AccessResult{})
	if !errors.As(err, &oe) || oe.Message != "java.lang.IllegalArgumentException: field resource must be an object of resource name to value(s)" {
		t.Fatalf("request without a resource: got %v", err)
	}
	err = r.p.call(ctx, map[string]any{"op": "inspect"}, &AccessResult{})
	if !errors.As(err, &oe) || oe.Message != "java.lang.IllegalArgumentException: unknown op inspect" {
		t.Fatalf("unknown op: got %v", err)
	}
	_, err = r.Access(ctx, Request{Resource: col("hr", "t", ""), AccessType: "select", User: "u", Context: map[string]json.RawMessage{"TAGS": json.RawMessage(`"[{"`)}})
	if !errors.As(err, &oe) || !strings.Contains(oe.Message, "JsonEOFException") {
		t.Fatalf("request with broken TAGS: got %v", err)
	}
	got, err := r.Access(ctx, Request{Resource: col("hr", "employees", "ssn"), AccessType: "select", User: "alice"})
	if err != nil || !got.Allowed || got.PolicyID != 1 {
		t.Fatalf("access after errors: got %+v, %v", got, err)
	}
}

// TestOracleThatDoesNotStart: a JVM that exits before its ready line is an
// error naming its stderr, not a hang.
func TestOracleThatDoesNotStart(t *testing.T) {
	skipIfAsked(t)
	a, err := HiveArtifact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a.MainClass = "org.pgranger.interop.NoSuchOracle"
	t0 := time.Now()
	_, err = startProc(context.Background(), a, Options{StartTimeout: 30 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "did not start") || !strings.Contains(err.Error(), "NoSuchOracle") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(t0); d > 20*time.Second {
		t.Errorf("took %v to notice", d)
	}
}

// TestGoEngineAgreesOnSmokeBundle asks pgranger's engine what the smoke
// test asks Ranger, through the paths Ranger's test files do not take:
// tags from ServiceTags, roles from RangerRoles, attributes from the user
// store. pgranger keeps ${{…}} verbatim (its SQL layer expands them, and
// denies where an attribute is missing: docs/policy-semantics.md), so CUSTOM
// masks and row filters compare after expanding USER attributes as Ranger
// does, a missing one as "".
func TestGoEngineAgreesOnSmokeBundle(t *testing.T) {
	r := RangerForTest(t, "")
	ctx := context.Background()
	b := smokeBundle(t)
	if _, err := r.Load(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(b, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	userAttr := regexp.MustCompile(`\$\{\{USER\.([A-Za-z_]+)\}\}`)
	expand := func(s, user string) string {
		return userAttr.ReplaceAllStringFunc(s, func(m string) string {
			return b.UserStore.UserAttrMapping[user][userAttr.FindStringSubmatch(m)[1]]
		})
	}
	users := []struct {
		name   string
		groups []string
	}{{"alice", nil}, {"bob", []string{"analysts"}}, {"carol", nil}, {"dan", []string{"analysts"}}, {"mallory", []string{"analysts"}}, {"eve", nil}}
	for _, u := range users {
		subj := &policy.Subject{User: u.name, Groups: u.groups}
		for _, c := range []string{"ssn", "name", "email", "salary"} {
			res := col("hr", "employees", c)
			got, err := r.Access(ctx, Request{Resource: res, AccessType: "select", User: u.name, Groups: u.groups})
			if err != nil {
				t.Fatal(err)
			}
			d := eng.Access(subj, policy.Resource{Database: "hr", Table: "employees", Column: c}, "select", time.Time{})
			if d.Allowed != got.Allowed || rangerPolicyID(d.PolicyID) != got.PolicyID {
				t.Errorf("access %s %s: pgranger allowed=%v policy %d, Ranger allowed=%v policy %d", u.name, c, d.Allowed, rangerPolicyID(d.PolicyID), got.Allowed, got.PolicyID)
			}
			gm, err := r.Mask(ctx, Request{Resource: res, User: u.name, Groups: u.groups})
			if err != nil {
				t.Fatal(err)
			}
			m := eng.Mask(subj, policy.Resource{Database: "hr", Table: "employees", Column: c}, time.Time{})
			mt := m.Type
			if mt == "" && m.PolicyID != 0 {
				mt = "MASK_NONE"
			}
			if mt != gm.MaskType || rangerPolicyID(m.PolicyID) != gm.PolicyID || expand(m.ValueExpr, u.name) != gm.MaskedValue {
				t.Errorf("mask %s %s: pgranger %s %q policy %d, Ranger %s %q policy %d", u.name, c, mt, m.ValueExpr, rangerPolicyID(m.PolicyID), gm.MaskType, gm.MaskedValue, gm.PolicyID)
			}
		}
		grf, err := r.RowFilter(ctx, Request{Resource: col("hr", "employees", ""), User: u.name, Groups: u.groups})
		if err != nil {
			t.Fatal(err)
		}
		rf := eng.RowFilter(subj, policy.Resource{Database: "hr", Table: "employees"}, time.Time{})
		got := ""
		if len(rf.Exprs) == 1 {
			got = expand(rf.Exprs[0], u.name)
		}
		if len(rf.Exprs) > 1 || got != grf.FilterExpr {
			t.Errorf("row filter %s: pgranger %q, Ranger %q", u.name, rf.Exprs, grf.FilterExpr)
		}
	}
}

func rangerPolicyID(id int64) int64 {
	if id == 0 {
		return -1
	}
	return id
}
