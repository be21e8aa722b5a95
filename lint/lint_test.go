package lint

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

func TestPolicies(t *testing.T) {
	data, err := os.ReadFile("testdata/findings.json")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ranger.ParseServicePolicies(data)
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
		`warning: policy 8 "ends soon": stops applying in 4 days 12 hours, at 2026/01/05 12:00:00 UTC, when its last validity schedule ends`,
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
		RuleScheduleEnded, RuleEndsSoon, RuleMaskTypeCase, RuleMaskTypeUndeclared, RuleMaskTypeComponent, RuleMaskTypeUndeclared}
	for i, f := range findings {
		if i < len(rules) && f.Rule != rules[i] {
			t.Errorf("finding %d (%s): rule %s, want %s", i, f, f.Rule, rules[i])
		}
	}
	if findings[0].PolicyID != 2 || findings[0].PolicyName != "public everywhere" {
		t.Errorf("first finding: %+v", findings[0])
	}
}
