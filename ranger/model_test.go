package ranger

import (
	"encoding/json"
	"testing"
	"time"
)

const fullPolicy = `{
  "id": 42, "guid": "g-42", "isEnabled": true, "version": 3, "service": "cm_hive", "name": "mask ssn",
  "policyType": 1, "policyPriority": 1, "isAuditEnabled": true, "isDenyAllElse": false,
  "createTime": 1564534066221, "updateTime": "20190730-17:47:46.221--0700",
  "resources": {"database": {"values": ["hr"]}, "table": {"values": ["emp"]}, "column": {"values": ["ssn"], "isExcludes": false}},
  "additionalResources": [{"database": {"values": ["hr2"]}, "table": {"values": ["emp"]}, "column": {"values": ["ssn"]}}],
  "conditions": [{"type": "expression", "values": ["IS_IN_GROUP('x')"]}],
  "dataMaskPolicyItems": [
    {"accesses": [{"type": "select", "isAllowed": true}], "users": ["alice"], "groups": ["g"], "roles": ["r"],
     "conditions": [{"type": "ip-range", "values": ["10.0.0.0/8"]}],
     "dataMaskInfo": {"dataMaskType": "MASK_SHOW_LAST_4"}},
    {"accesses": [{"type": "select"}], "groups": ["public"],
     "dataMaskInfo": {"dataMaskType": "CUSTOM", "valueExpr": "concat('x', {col})", "conditionExpr": "1=1"}}
  ],
  "rowFilterPolicyItems": [
    {"accesses": [{"type": "select"}], "users": ["bob"], "rowFilterInfo": {"filterExpr": "region = 'EU'"}},
    {"accesses": [{"type": "select"}], "users": ["carol"]}
  ],
  "validitySchedules": [
    {"startTime": "2024/01/01 00:00:00", "endTime": "2024/12/31 23:59:59", "timeZone": "Europe/Paris",
     "recurrences": [{"schedule": {"minute": "0", "hour": 9, "dayOfMonth": "*", "dayOfWeek": "2-6", "month": "*", "year": "*"},
                      "interval": {"hours": 8}}]}
  ],
  "options": {"k": 1, "nested": {"a": true}},
  "policyLabels": ["pii"], "zoneName": "",
  "denyPolicyItems": [], "allowExceptions": [], "denyExceptions": []
}`

func TestRangerPolicyAllFields(t *testing.T) {
	var p RangerPolicy
	if err := json.Unmarshal([]byte(fullPolicy), &p); err != nil {
		t.Fatal(err)
	}
	if p.ID != 42 || p.Name != "mask ssn" || p.PolicyType != PolicyTypeDataMask || p.PolicyPriority != PolicyPriorityOverride {
		t.Errorf("header fields: %+v", p)
	}
	if p.CreateTime.UnixMilli() != 1564534066221 || p.UpdateTime.IsZero() {
		t.Errorf("dates: %v %v", p.CreateTime, p.UpdateTime)
	}
	if len(p.AdditionalResources) != 1 || p.AdditionalResources[0]["database"].Values[0] != "hr2" {
		t.Errorf("additionalResources: %+v", p.AdditionalResources)
	}
	if len(p.Conditions) != 1 || p.Conditions[0].Type != "expression" {
		t.Errorf("conditions: %+v", p.Conditions)
	}
	if len(p.DataMaskPolicyItems) != 2 {
		t.Fatalf("dataMaskPolicyItems: %+v", p.DataMaskPolicyItems)
	}
	m0 := p.DataMaskPolicyItems[0]
	if m0.DataMaskInfo == nil || m0.DataMaskInfo.DataMaskType != "MASK_SHOW_LAST_4" {
		t.Errorf("dataMaskInfo not read: %+v", m0)
	}
	// The embedded item must be decoded along with dataMaskInfo.
	if m0.Users[0] != "alice" || m0.Roles[0] != "r" || m0.Conditions[0].Type != "ip-range" || !m0.Accesses[0].IsAllowed {
		t.Errorf("embedded item fields not read: %+v", m0.RangerPolicyItem)
	}
	m1 := p.DataMaskPolicyItems[1]
	if m1.DataMaskInfo.ValueExpr != "concat('x', {col})" || m1.DataMaskInfo.ConditionExpr != "1=1" || !m1.Accesses[0].IsAllowed {
		t.Errorf("custom mask item: %+v", m1)
	}
	rf := p.RowFilterPolicyItems
	if len(rf) != 2 || rf[0].RowFilterInfo.FilterExpr != "region = 'EU'" || rf[0].Users[0] != "bob" || rf[1].RowFilterInfo != nil {
		t.Errorf("rowFilterPolicyItems: %+v", rf)
	}
	vs := p.ValiditySchedules[0]
	if vs.StartTime != "2024/01/01 00:00:00" || vs.TimeZone != "Europe/Paris" {
		t.Errorf("validity schedule: %+v", vs)
	}
	rec := vs.Recurrences[0]
	if rec.Schedule.Hour != "9" || rec.Schedule.DayOfWeek != "2-6" || rec.Interval.Hours != 8 {
		t.Errorf("recurrence: %+v", rec)
	}
	if p.Options["k"].(float64) != 1 || p.PolicyLabels[0] != "pii" {
		t.Errorf("options/labels: %+v %+v", p.Options, p.PolicyLabels)
	}
}

func TestServiceDefShapes(t *testing.T) {
	doc := `{"name": "hive", "id": 3,
	  "resources": [{"name": "database", "level": 10, "isValidLeaf": true, "excludesSupported": true,
	                 "matcher": "org.apache.ranger.plugin.resourcematcher.RangerDefaultResourceMatcher",
	                 "matcherOptions": {"wildCard": "true", "ignoreCase": "true"}}],
	  "accessTypes": [{"itemId": 1, "name": "select"}, {"name": "all", "impliedGrants": ["select"]}],
	  "policyConditions": [{"name": "expression", "evaluator": "org.apache.ranger.plugin.conditionevaluator.RangerScriptConditionEvaluator",
	                        "evaluatorOptions": {"engineName": "JavaScript", "ui.isMultiline": "true"}}],
	  "dataMaskDef": {"maskTypes": [{"itemId": 1, "name": "MASK", "transformer": "mask({col})"}],
	                  "accessTypes": [{"name": "select"}],
	                  "resources": [{"name": "database", "matcherOptions": {"wildCard": "false"}}]},
	  "rowFilterDef": {"accessTypes": [{"name": "select"}], "resources": [{"name": "database"}, {"name": "table"}]},
	  "options": {"enableDenyAndExceptionsInPolicies": "true"},
	  "configs": [{"name": "username", "type": "string", "mandatory": true}]
	}`
	var sd RangerServiceDef
	if err := json.Unmarshal([]byte(doc), &sd); err != nil {
		t.Fatal(err)
	}
	if sd.Resources[0].IsValidLeaf == nil || !*sd.Resources[0].IsValidLeaf || sd.Resources[0].Level != 10 {
		t.Errorf("resource def: %+v", sd.Resources[0])
	}
	if sd.AccessTypes[1].ImpliedGrants[0] != "select" {
		t.Errorf("implied grants: %+v", sd.AccessTypes)
	}
	if sd.PolicyConditions[0].EvaluatorOptions["engineName"] != "JavaScript" {
		t.Errorf("condition def: %+v", sd.PolicyConditions)
	}
	if sd.DataMaskDef.MaskTypes[0].Transformer != "mask({col})" || sd.DataMaskDef.Resources[0].MatcherOptions["wildCard"] != "false" {
		t.Errorf("dataMaskDef: %+v", sd.DataMaskDef)
	}
	if len(sd.RowFilterDef.Resources) != 2 || sd.Options["enableDenyAndExceptionsInPolicies"] != "true" || !sd.Configs[0].Mandatory {
		t.Errorf("rowFilterDef/options/configs: %+v", sd)
	}
}

func TestTagPoliciesAndServiceConfig(t *testing.T) {
	doc := `{"serviceName": "cm_hive", "policyVersion": 12, "auditMode": "audit-all",
	  "serviceConfig": {"ranger.plugin.super.users": "admin, hive", "ranger.plugin.audit.filters": "[]"},
	  "tagPolicies": {"serviceName": "cm_tag", "policies": [{"id": 9, "resources": {"tag": {"values": ["PII"]}}}],
	                  "serviceDef": {"name": "tag"}},
	  "securityZones": {"z1": {"zoneName": "z1", "resources": [{"database": ["db1"]}]}}}`
	sp, err := ParseServicePolicies([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if sp.PolicyVersion != 12 || sp.AuditMode != AuditModeAll {
		t.Errorf("header: %+v", sp)
	}
	if sp.ServiceConfig["ranger.plugin.super.users"] != "admin, hive" {
		t.Errorf("serviceConfig: %+v", sp.ServiceConfig)
	}
	tp := sp.TagPolicies
	if tp == nil || tp.PolicyVersion != -1 || tp.AuditMode != AuditModeDefault || tp.Policies[0].ID != 9 || tp.ServiceDef.Name != "tag" {
		t.Errorf("tagPolicies: %+v", tp)
	}
	if !tp.Policies[0].IsEnabled {
		t.Errorf("tag policy defaults not applied")
	}
	if sp.SecurityZones["z1"].Resources[0]["database"][0] != "db1" {
		t.Errorf("securityZones: %+v", sp.SecurityZones)
	}
}

func TestTimestampMarshal(t *testing.T) {
	ts := Timestamp{Time: time.UnixMilli(1700000000123)}
	b, err := json.Marshal(ts)
	if err != nil || string(b) != "1700000000123" {
		t.Errorf("marshal = %s, %v", b, err)
	}
	var back Timestamp
	if err := json.Unmarshal(b, &back); err != nil || !back.Equal(ts.Time) {
		t.Errorf("round trip = %v, %v", back, err)
	}
	b, _ = json.Marshal(Timestamp{})
	if string(b) != "null" {
		t.Errorf("zero timestamp = %s", b)
	}
}

func TestNullElementsAreNoOps(t *testing.T) {
	sp, err := ParseServicePolicies([]byte(`{"policies": null, "serviceDef": null, "tagPolicies": null, "serviceConfig": null}`))
	if err != nil {
		t.Fatal(err)
	}
	if sp.Policies != nil || sp.ServiceDef != nil || sp.TagPolicies != nil || sp.ServiceConfig != nil {
		t.Errorf("nulls should leave fields empty: %+v", sp)
	}
}
