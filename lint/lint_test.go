package lint

import (
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

func TestPolicies(t *testing.T) {
	sp, err := ranger.ParseServicePolicies([]byte(`{
  "serviceName": "svc",
  "policies": [
    {"id": 1, "name": "clean", "policyLabels": ["owner:data-team"],
     "resources": {"database": {"values": ["sales"]}, "table": {"values": ["orders"]}, "column": {"values": ["*"]}},
     "policyItems": [{"accesses": [{"type": "select"}], "groups": ["analysts"]}],
     "denyPolicyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]},
    {"id": 2, "name": "public everywhere", "policyLabels": ["owner:x"],
     "resources": {"database": {"values": ["sales"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
     "policyItems": [{"accesses": [{"type": "select"}, {"type": "update"}], "groups": ["public"]}]},
    {"id": 3, "name": "no labels", "description": "d",
     "resources": {"database": {"values": ["hr"]}, "table": {"values": ["t"]}, "column": {"values": ["c"]}},
     "policyItems": [{"accesses": [{"type": "select"}], "users": ["{USER}"]}]},
    {"id": 4, "name": "excludes", "policyLabels": ["owner:x"],
     "resources": {"database": {"values": ["secret"], "isExcludes": true}, "table": {"values": ["t"]}, "column": {"values": ["c"]}},
     "policyItems": [{"accesses": [{"type": "select"}], "users": ["{USER}"]}]},
    {"id": 5, "name": "expired", "policyLabels": ["owner:x"],
     "resources": {"database": {"values": ["a"]}, "table": {"values": ["t"]}, "column": {"values": ["c"]}},
     "validitySchedules": [{"startTime": "2020/01/01 00:00:00", "endTime": "2024/12/31 23:59:59", "timeZone": "Europe/Berlin"}],
     "policyItems": [{"accesses": [{"type": "select"}], "groups": ["g"]}]},
    {"id": 6, "name": "still valid", "policyLabels": ["owner:x"],
     "resources": {"database": {"values": ["a"]}, "table": {"values": ["t"]}, "column": {"values": ["c"]}},
     "validitySchedules": [{"endTime": "2024/01/01 00:00:00"}, {"endTime": "2030/01/01 00:00:00"}],
     "policyItems": [{"accesses": [{"type": "select"}], "groups": ["g"]}]},
    {"id": 7, "name": "masks", "policyType": 1, "policyLabels": ["owner:x"],
     "resources": {"database": {"values": ["a"]}, "table": {"values": ["t"]}, "column": {"values": ["c"]}},
     "dataMaskPolicyItems": [
       {"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK_NONE"}},
       {"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK_SHOW_LAST_4"}},
       {"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "mask_hash"}},
       {"accesses": [{"type": "select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "MASK_SHOW_LAST_2"}}]}
  ],
  "tagPolicies": {"serviceName": "tags", "policies": [
    {"id": 100, "name": "tag mask", "policyType": 1, "policyLabels": ["owner:x"],
     "resources": {"tag": {"values": ["PII"]}},
     "dataMaskPolicyItems": [
       {"accesses": [{"type": "hive:select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "hive:MASK_HASH"}},
       {"accesses": [{"type": "hive:select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "hbase:MASK"}},
       {"accesses": [{"type": "hive:select"}], "groups": ["public"], "dataMaskInfo": {"dataMaskType": "hive:MASK_X"}}]}
  ]}
}`))
	if err != nil {
		t.Fatal(err)
	}
	findings := Policies(sp, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	want := []string{
		`error: policy 2 "public everywhere": grants group public select,update on wildcard resource database=sales, table=*, column=*`,
		`warning: policy 3 "no labels": has no owner label (policyLabels is empty)`,
		`error: policy 4 "excludes": grants user {USER} (every user) select on wildcard resource database=not secret, table=t, column=c`,
		`warning: policy 4 "excludes": excludes database=secret but has no description saying why`,
		`warning: policy 5 "expired": validity schedule ended 2024/12/31 23:59:59 Europe/Berlin`,
		`warning: policy 5 "expired": every validity schedule has ended: the policy never applies`,
		`warning: policy 6 "still valid": validity schedule ended 2024/01/01 00:00:00 GMT`,
		`error: policy 7 "masks": mask item 3: mask type "mask_hash" is declared as "MASK_HASH" (Ranger compares mask type names exactly)`,
		`error: policy 7 "masks": mask item 4: mask type "MASK_SHOW_LAST_2" is not declared in the serviceDef's dataMaskDef`,
		`error: policy 100 "tag mask": mask item 2: mask type "hbase:MASK" is for another component than hive`,
		`error: policy 100 "tag mask": mask item 3: mask type "MASK_X" is not declared in the serviceDef's dataMaskDef`,
	}
	var got []string
	for _, f := range findings {
		got = append(got, f.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rules := []Rule{RulePublicWildcard, RuleNoOwnerLabel, RulePublicWildcard, RuleExcludesNoReason, RuleScheduleEnded, RuleNeverApplies,
		RuleScheduleEnded, RuleMaskTypeCase, RuleMaskTypeUndeclared, RuleMaskTypeComponent, RuleMaskTypeUndeclared}
	for i, f := range findings {
		if i < len(rules) && f.Rule != rules[i] {
			t.Errorf("finding %d (%s): rule %s, want %s", i, f, f.Rule, rules[i])
		}
	}
	if findings[0].PolicyID != 2 || findings[0].PolicyName != "public everywhere" {
		t.Errorf("first finding: %+v", findings[0])
	}
}
