package policy

import (
	"reflect"
	"testing"

	"github.com/pgranger/pgranger/ranger"
)

// Tags for TagsOf and the tag information of masks and row filters: two
// PII tags with different attributes on a column and on its table, a PII
// and a REGION tag on the database as well, an expired tag.
const tagsOfDoc = `{"serviceName": "cm_hive", "tagVersion": 7,
 "tags": {
   "1": {"type": "PII", "attributes": {"level": "high"}},
   "2": {"type": "PII", "attributes": {"level": "low"}},
   "3": {"type": "REGION", "attributes": {"region": "EU"}},
   "5": {"type": "OLD", "validityPeriods": [{"endTime": "2020/01/01 00:00:00"}]},
   "6": {"type": "DBTAG", "attributes": {"owner": "finance"}},
   "7": {"type": "PII", "attributes": {"level": "db"}},
   "8": {"type": "REGION", "attributes": {"region": "EU2"}}
 },
 "serviceResources": [
   {"id": 10, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["ssn"]}}},
   {"id": 11, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}}},
   {"id": 12, "resourceElements": {"database": {"values": ["sales"]}}},
   {"id": 13, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["notes"]}}}
 ],
 "resourceToTagIds": {"10": [1], "11": [3, 2], "12": [6, 7, 8], "13": [5]}
}`

const tagsOfPolicies = `{"serviceName": "cm_hive", "policyVersion": 1,
 "policies": [
  {"id": 1, "name": "everyone reads sales", "resources": {"database": {"values": ["sales"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
  {"id": 900, "name": "stores", "policyType": 2, "resources": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}},
   "rowFilterPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"], "rowFilterInfo": {"filterExpr": "store_id = 1"}}]}
 ],
 "tagPolicies": {"serviceName": "cm_tag", "serviceDef": ` + tagServiceDef + `,
  "policies": [
   {"id": 600, "name": "PII by level", "policyType": 1, "resources": {"tag": {"values": ["PII"]}},
    "dataMaskPolicyItems": [{"accesses": [{"type": "hive:select"}], "groups": ["public"],
      "dataMaskInfo": {"dataMaskType": "CUSTOM", "valueExpr": "CASE WHEN '${{TAG.level}}' = 'low' THEN {col} END"}}]},
   {"id": 700, "name": "PII rows", "policyType": 2, "resources": {"tag": {"values": ["PII"]}},
    "rowFilterPolicyItems": [{"accesses": [{"type": "hive:select"}], "groups": ["public"], "rowFilterInfo": {"filterExpr": "level <= '${{TAG.level}}'"}}]},
   {"id": 701, "name": "EU rows", "policyType": 2, "resources": {"tag": {"values": ["REGION"]}},
    "rowFilterPolicyItems": [{"accesses": [{"type": "hive:select"}], "groups": ["public"], "rowFilterInfo": {"filterExpr": "region = 'EU'"}}]}
  ]}
}`

func tagsOfEngine(t *testing.T) *Engine {
	t.Helper()
	b := testBundle(t, tagsOfPolicies)
	st, err := ranger.ParseServiceTags([]byte(tagsOfDoc))
	if err != nil {
		t.Fatal(err)
	}
	b.Tags = st
	e, err := NewEngine(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func tag(typ, match string, kv ...string) Tag {
	attrs := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		attrs[kv[i]] = kv[i+1]
	}
	return Tag{Type: typ, Attributes: attrs, MatchType: match}
}

func TestTagsOf(t *testing.T) {
	e := tagsOfEngine(t)
	tests := []struct {
		name string
		r    Resource
		want []Tag
	}{
		{"a column: its own tags, then its table's and database's, in stored order", res("sales", "customers", "ssn"), []Tag{
			tag("PII", "SELF", "level", "high"), tag("REGION", "ANCESTOR", "region", "EU"), tag("PII", "ANCESTOR", "level", "low"),
			tag("DBTAG", "ANCESTOR", "owner", "finance"), tag("PII", "ANCESTOR", "level", "db"), tag("REGION", "ANCESTOR", "region", "EU2")}},
		{"a table: its columns' tags do not apply", res("sales", "customers", ""), []Tag{
			tag("REGION", "SELF", "region", "EU"), tag("PII", "SELF", "level", "low"),
			tag("DBTAG", "ANCESTOR", "owner", "finance"), tag("PII", "ANCESTOR", "level", "db"), tag("REGION", "ANCESTOR", "region", "EU2")}},
		{"an expired tag does not apply", res("sales", "customers", "notes"), []Tag{
			tag("REGION", "ANCESTOR", "region", "EU"), tag("PII", "ANCESTOR", "level", "low"),
			tag("DBTAG", "ANCESTOR", "owner", "finance"), tag("PII", "ANCESTOR", "level", "db"), tag("REGION", "ANCESTOR", "region", "EU2")}},
		{"another table of the database", res("sales", "orders", "id"), []Tag{
			tag("DBTAG", "ANCESTOR", "owner", "finance"), tag("PII", "ANCESTOR", "level", "db"), tag("REGION", "ANCESTOR", "region", "EU2")}},
		{"an untagged database", res("hr", "employees", "id"), []Tag{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.TagsOf(subj("ann"), tc.r, t0); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
	// The result is a copy: changing it changes nothing in the engine.
	got := e.TagsOf(subj("ann"), res("sales", "customers", "ssn"), t0)
	got[0].Attributes["level"] = "changed"
	if again := e.TagsOf(subj("ann"), res("sales", "customers", "ssn"), t0); again[0].Attributes["level"] != "high" {
		t.Errorf("TagsOf shares its maps with the engine: %+v", again[0])
	}
	// Without ServiceTags there are no tags.
	if tags := testEngine(t, tagsOfPolicies).TagsOf(subj("ann"), res("sales", "customers", "ssn"), t0); tags != nil {
		t.Errorf("no ServiceTags: %+v", tags)
	}
}

// A tag policy's mask and filters name the tag they were evaluated for, so
// that ${{TAG…}} in them can be evaluated; an expression that may read
// the tag applies once per tag, any other once per policy.
func TestTagPolicyResultsNameTheirTag(t *testing.T) {
	e := tagsOfEngine(t)
	m := e.Mask(subj("ann"), res("sales", "customers", "ssn"), t0)
	if want := tag("PII", "SELF", "level", "high"); m.PolicyID != 600 || m.Tag != "PII" || m.CurrentTag == nil || !reflect.DeepEqual(*m.CurrentTag, want) {
		t.Errorf("mask %+v (current tag %+v), want policy 600 for %+v", m, m.CurrentTag, want)
	}
	// A column with no tag of its own: the table's PII comes first
	// (ANCESTOR of the table before the database's).
	m = e.Mask(subj("ann"), res("sales", "customers", "email"), t0)
	if want := tag("PII", "ANCESTOR", "level", "low"); m.CurrentTag == nil || !reflect.DeepEqual(*m.CurrentTag, want) {
		t.Errorf("mask of an untagged column: current tag %+v, want %+v", m.CurrentTag, want)
	}

	rf := e.RowFilter(subj("ann"), res("sales", "customers", ""), t0)
	region, low, db := tag("REGION", "SELF", "region", "EU"), tag("PII", "SELF", "level", "low"), tag("PII", "ANCESTOR", "level", "db")
	want := RowFilter{
		Exprs:     []string{"store_id = 1", "region = 'EU'", "level <= '${{TAG.level}}'", "level <= '${{TAG.level}}'"},
		PolicyIDs: []int64{900, 701, 700, 700},
		Tags:      []*Tag{nil, &region, &low, &db},
	}
	if !reflect.DeepEqual(rf, want) {
		t.Errorf("row filter\n got  %+v\n want %+v", rf, want)
		for i, tg := range rf.Tags {
			t.Logf("tag %d: %+v", i, tg)
		}
	}
	if len(rf.Tags) != len(rf.Exprs) {
		t.Errorf("Tags is not parallel to Exprs: %d vs %d", len(rf.Tags), len(rf.Exprs))
	}
}
