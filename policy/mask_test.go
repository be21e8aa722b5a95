package policy

import (
	"reflect"
	"testing"

	"github.com/pgranger/pgranger/ranger"
)

const tagServiceDef = `{"name": "tag", "id": 100,
  "resources": [{"name": "tag", "level": 1, "matcher": "org.apache.ranger.plugin.resourcematcher.RangerDefaultResourceMatcher",
                 "matcherOptions": {"wildCard": "false", "ignoreCase": "false"}}],
  "accessTypes": [{"name": "hive:select"}, {"name": "hive:update"}, {"name": "hive:all", "impliedGrants": ["hive:select", "hive:update"]},
                  {"name": "hbase:read"}],
  "dataMaskDef": {"maskTypes": [{"name": "hive:MASK_HASH", "transformer": "mask_hash({col})"}, {"name": "hive:MASK"}],
                  "accessTypes": [{"name": "hive:select"}],
                  "resources": [{"name": "tag", "matcherOptions": {"wildCard": "false", "ignoreCase": "false"}}]},
  "rowFilterDef": {"accessTypes": [{"name": "hive:select"}],
                   "resources": [{"name": "tag", "matcherOptions": {"wildCard": "false", "ignoreCase": "false"}}]}
}`

const tagBundleDoc = `{"serviceName": "cm_hive", "policyVersion": 42,
 "policies": [
  {"id": 1, "name": "everyone reads sales", "resources": {"database": {"values": ["sales"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
  {"id": 800, "name": "ssn last 4", "policyType": 1, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["ssn"]}},
   "dataMaskPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK_SHOW_LAST_4"}}]},
  {"id": 801, "name": "phone override", "policyType": 1, "policyPriority": 1, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["phone"]}},
   "dataMaskPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK_NULL"}}]},
  {"id": 802, "name": "name: exempt boss", "policyType": 1, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["name"]}},
   "dataMaskPolicyItems": [
     {"accesses": [{"type": "select"}], "users": ["boss"], "dataMaskInfo": {"dataMaskType": "MASK_NONE"}},
     {"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK"}}]},
  {"id": 803, "name": "b-policy", "policyType": 1, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["email"]}},
   "dataMaskPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK_HASH"}}]},
  {"id": 804, "name": "a-policy", "policyType": 1, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["email"]}},
   "dataMaskPolicyItems": [{"accesses": [{"type": "select"}], "users": ["ann"], "dataMaskInfo": {"dataMaskType": "MASK"}}]},
  {"id": 805, "name": "a0 no info", "policyType": 1, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["email"]}},
   "dataMaskPolicyItems": [{"accesses": [{"type": "select"}], "users": ["bob"]}]},
  {"id": 806, "name": "custom", "policyType": 1, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["city"]}},
   "dataMaskPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"],
     "dataMaskInfo": {"dataMaskType": "CUSTOM", "valueExpr": "CASE WHEN region = '${{USER.region}}' THEN {col} ELSE NULL END"}}]},
  {"id": 807, "name": "wildcard is a name in mask resources", "policyType": 1, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["cust*"]}, "column": {"values": ["*d"]}},
   "dataMaskPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK"}}]},
  {"id": 809, "name": "a lone * matches everything", "policyType": 1, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["ledger"]}, "column": {"values": ["**"]}},
   "dataMaskPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK"}}]},
  {"id": 808, "name": "unknown condition", "policyType": 1, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["zip"]}},
   "dataMaskPolicyItems": [
     {"accesses": [{"type": "select"}], "groups": ["public"], "conditions": [{"type": "ip-range", "values": ["x"]}], "dataMaskInfo": {"dataMaskType": "MASK_NONE"}},
     {"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK_HASH"}}]},
  {"id": 898, "name": "doubtful filter", "policyType": 2, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["leads"]}},
   "rowFilterPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "conditions": [{"type": "ip-range", "values": ["x"]}], "rowFilterInfo": {"filterExpr": "true"}}]},
  {"id": 899, "name": "a-first filter", "policyType": 2, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}},
   "rowFilterPolicyItems": [{"accesses": [{"type": "select"}], "users": ["boss"]}]},
  {"id": 900, "name": "stores", "policyType": 2, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}},
   "rowFilterPolicyItems": [
     {"accesses": [{"type": "select"}], "users": ["ann"], "rowFilterInfo": {"filterExpr": "owner = current_user"}},
     {"accesses": [{"type": "select"}], "groups": ["public"], "rowFilterInfo": {"filterExpr": "store_id in (1, 2)"}}]}
 ],
 "tagPolicies": {"serviceName": "cm_tag", "serviceDef": ` + tagServiceDef + `,
  "policies": [
   {"id": 500, "name": "contractors no PII", "resources": {"tag": {"values": ["PII"]}},
    "denyPolicyItems": [{"accesses": [{"type": "hive:select"}], "groups": ["contractors"]}]},
   {"id": 501, "name": "other component only", "isAuditEnabled": false, "resources": {"tag": {"values": ["PII"]}},
    "denyPolicyItems": [{"accesses": [{"type": "hbase:read"}], "groups": ["public"]}]},
   {"id": 600, "name": "hash PII", "policyType": 1, "resources": {"tag": {"values": ["PII"]}},
    "dataMaskPolicyItems": [{"accesses": [{"type": "hive:select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "hive:MASK_HASH"}}]},
   {"id": 601, "name": "legacy", "policyType": 1, "resources": {"tag": {"values": ["LEGACY"]}},
    "dataMaskPolicyItems": [{"accesses": [{"type": "hive:select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "hbase:MASK"}}]},
   {"id": 602, "name": "confidential table", "policyType": 1, "resources": {"tag": {"values": ["CONFIDENTIAL"]}},
    "dataMaskPolicyItems": [{"accesses": [{"type": "hive:select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK_NULL"}}]},
   {"id": 603, "name": "expired tag mask", "policyType": 1, "resources": {"tag": {"values": ["EXPIRED"]}},
    "dataMaskPolicyItems": [{"accesses": [{"type": "hive:select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK_NULL"}}]},
   {"id": 700, "name": "EU rows", "policyType": 2, "resources": {"tag": {"values": ["EU"]}},
    "rowFilterPolicyItems": [{"accesses": [{"type": "hive:select"}], "groups": ["public"], "rowFilterInfo": {"filterExpr": "region = 'EU'"}}]}
  ]}
}`

const serviceTagsDoc = `{"serviceName": "cm_hive", "tagVersion": 3,
 "tags": {
   "1": {"type": "PII"}, "2": {"type": "EU"}, "3": {"type": "LEGACY"}, "4": {"type": "CONFIDENTIAL"},
   "5": {"type": "EXPIRED", "validityPeriods": [{"endTime": "2020/01/01 00:00:00"}]}
 },
 "serviceResources": [
   {"id": 10, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["ssn", "phone"]}}},
   {"id": 11, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}}},
   {"id": 12, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["old"]}, "column": {"values": ["code"]}}},
   {"id": 13, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["secrets"]}}},
   {"id": 14, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["notes"]}}}
 ],
 "resourceToTagIds": {"10": [1], "11": [2], "12": [3], "13": [4], "14": [5]}
}`

func tagEngine(t *testing.T, opts Options) *Engine {
	t.Helper()
	b := testBundle(t, tagBundleDoc)
	st, err := ranger.ParseServiceTags([]byte(serviceTagsDoc))
	if err != nil {
		t.Fatal(err)
	}
	b.Tags = st
	b.Policies.ServiceDef = hiveDefWithConditions()
	e, err := NewEngine(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestMasks(t *testing.T) {
	e := tagEngine(t, Options{})
	col := func(c string) Resource { return res("sales", "customers", c) }
	tests := []struct {
		name string
		s    *Subject
		r    Resource
		want Mask
	}{
		{"tag mask beats resource mask of the same priority", subj("ann"), col("ssn"),
			Mask{Type: "MASK_HASH", Transformer: "mask_hash({col})", PolicyID: 600, Tag: "PII"}},
		{"override resource mask beats tag mask", subj("ann"), col("phone"),
			Mask{Type: "MASK_NULL", PolicyID: 801}},
		{"MASK_NONE item first exempts", subj("boss"), col("name"), Mask{PolicyID: 802}},
		{"later item for others", subj("ann"), col("name"), Mask{Type: "MASK", Transformer: "mask({col})", PolicyID: 802}},
		{"policy name order among equals", subj("ann"), col("email"), Mask{Type: "MASK", Transformer: "mask({col})", PolicyID: 804}},
		{"first policy without a matching item passes", subj("carl"), col("email"), Mask{Type: "MASK_HASH", Transformer: "mask_hash({col})", PolicyID: 803}},
		{"item without dataMaskInfo decides nothing", subj("bob"), col("email"), Mask{Type: "MASK_HASH", Transformer: "mask_hash({col})", PolicyID: 803}},
		{"CUSTOM valueExpr verbatim", subj("ann"), col("city"),
			Mask{Type: "CUSTOM", ValueExpr: "CASE WHEN region = '${{USER.region}}' THEN {col} ELSE NULL END", PolicyID: 806}},
		{"no mask", subj("ann"), col("id"), Mask{}},
		{"a lone * matches every name in mask resources", subj("ann"), res("sales", "ledger", "x"), Mask{Type: "MASK", Transformer: "mask({col})", PolicyID: 809}},
		{"an item with an unknown condition restricts the column", subj("ann"), col("zip"), Mask{Type: "MASK_NULL", PolicyID: 808, Unmappable: true}},
		{"foreign component mask is unmappable", subj("ann"), res("sales", "old", "code"), Mask{Type: "hbase:MASK", PolicyID: 601, Tag: "LEGACY", Unmappable: true}},
		{"a tag on the table masks its columns", subj("ann"), res("sales", "secrets", "anything"), Mask{Type: "MASK_NULL", PolicyID: 602, Tag: "CONFIDENTIAL"}},
		{"expired tag does not apply", subj("ann"), col("notes"), Mask{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := e.Mask(tc.s, tc.r, t0)
			cur := got.CurrentTag
			got.CurrentTag = nil
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			// A tag policy's mask names the tag it was evaluated for.
			if (cur != nil) != (tc.want.Tag != "") || cur != nil && cur.Type != tc.want.Tag {
				t.Errorf("current tag %+v, want one of type %q", cur, tc.want.Tag)
			}
		})
	}
	if m := e.Mask(subj("ann"), res("sales", "secrets", "anything"), t0); m.CurrentTag == nil || m.CurrentTag.MatchType != "ANCESTOR" {
		t.Errorf("a table's tag on a column request matches as ANCESTOR: %+v", m.CurrentTag)
	}

	re := tagEngine(t, Options{MaskPrecedence: "resource"})
	if got := re.Mask(subj("ann"), col("ssn"), t0); got.PolicyID != 800 || got.Type != "MASK_SHOW_LAST_4" {
		t.Errorf("resource precedence: %+v", got)
	}
	if got := re.Mask(subj("ann"), res("sales", "secrets", "x"), t0); got.PolicyID != 602 {
		t.Errorf("resource precedence falls back to the tag mask: %+v", got)
	}
}

func TestRowFilters(t *testing.T) {
	e := tagEngine(t, Options{})
	tests := []struct {
		name string
		s    *Subject
		r    Resource
		want RowFilter
	}{
		{"resource and tag filters ANDed", subj("carl"), res("sales", "customers", ""),
			RowFilter{Exprs: []string{"store_id in (1, 2)", "region = 'EU'"}, PolicyIDs: []int64{900, 700}, Tags: []*Tag{nil, &Tag{Type: "EU", Attributes: map[string]string{}, MatchType: "SELF"}}}},
		{"first matching item", subj("ann"), res("sales", "customers", ""),
			RowFilter{Exprs: []string{"owner = current_user", "region = 'EU'"}, PolicyIDs: []int64{900, 700}, Tags: []*Tag{nil, &Tag{Type: "EU", Attributes: map[string]string{}, MatchType: "SELF"}}}},
		{"item without filterExpr decides nothing", subj("boss"), res("sales", "customers", ""),
			RowFilter{Exprs: []string{"store_id in (1, 2)", "region = 'EU'"}, PolicyIDs: []int64{900, 700}, Tags: []*Tag{nil, &Tag{Type: "EU", Attributes: map[string]string{}, MatchType: "SELF"}}}},
		{"column ignored", subj("carl"), res("sales", "customers", "ssn"),
			RowFilter{Exprs: []string{"store_id in (1, 2)", "region = 'EU'"}, PolicyIDs: []int64{900, 700}, Tags: []*Tag{nil, &Tag{Type: "EU", Attributes: map[string]string{}, MatchType: "SELF"}}}},
		{"no filter", subj("carl"), res("sales", "orders", ""), RowFilter{}},
		{"an item with an unknown condition shows no rows", subj("carl"), res("sales", "leads", ""),
			RowFilter{Exprs: []string{"false"}, PolicyIDs: []int64{898}, Tags: []*Tag{nil}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.RowFilter(tc.s, tc.r, t0); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestTagAccess(t *testing.T) {
	e := tagEngine(t, Options{})
	contractor := subj("cy", "contractors")
	runAccess(t, e, []accessCase{
		{"tag deny on a column", contractor, res("sales", "customers", "ssn"), "select", t0, false, 500},
		{"untagged column", contractor, res("sales", "customers", "name"), "select", t0, true, 1},
		{"others read the tagged column", subj("ann"), res("sales", "customers", "ssn"), "select", t0, true, 1},
		{"column tags do not reach table-level select", contractor, res("sales", "customers", ""), "select", t0, true, 1},
		// Policy 501 only has another component's accesses and no audit: pruned.
		{"other components pruned", subj("ann"), res("sales", "customers", "phone"), "select", t0, true, 1},
	})
	d := e.Access(contractor, res("sales", "customers", "ssn"), "select", t0)
	if d.Reason != "denied by tag policy 500 (tag PII)" {
		t.Errorf("reason = %q", d.Reason)
	}
}

func TestUserAndGroupAttributes(t *testing.T) {
	b := testBundle(t, `{"policies": []}`)
	us, err := ranger.ParseUserStore([]byte(`{"userAttrMapping": {"ann": {"dept": "engg", "region": "EU"}}, "groupAttrMapping": {"bi": {"site": "paris"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	b.UserStore = us
	e, err := NewEngine(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &Subject{User: "ann", Groups: []string{"bi", "other"}, Attributes: map[string]string{"region": "US", "team": "data"}}
	want := map[string]string{"dept": "engg", "region": "US", "team": "data", "_name": "ann"}
	if got := e.UserAttributes(s); !reflect.DeepEqual(got, want) {
		t.Errorf("UserAttributes = %v, want %v", got, want)
	}
	wantG := map[string]map[string]string{"bi": {"site": "paris", "_name": "bi"}, "other": {"_name": "other"}}
	if got := e.GroupAttributes(s); !reflect.DeepEqual(got, wantG) {
		t.Errorf("GroupAttributes = %v, want %v", got, wantG)
	}
	if got := e.UserAttributes(nil); got["_name"] != "" {
		t.Errorf("nil subject: %v", got)
	}
}
