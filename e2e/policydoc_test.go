package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// policyDoc is a ServicePolicies document as generic JSON, so tests can
// edit the demo bundle the way an administrator edits it in Ranger.
type policyDoc map[string]any

func demoPolicies(t *testing.T) policyDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples/policies/hive.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d policyDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d policyDoc) bytes(t *testing.T) []byte {
	t.Helper()
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (d policyDoc) policies() []any { return d["policies"].([]any) }

// policy returns the policy with the given id.
func (d policyDoc) policy(t *testing.T, id int) map[string]any {
	t.Helper()
	for _, p := range d.policies() {
		pm := p.(map[string]any)
		if int(pm["id"].(float64)) == id {
			return pm
		}
	}
	t.Fatalf("no policy %d", id)
	return nil
}

// add appends a policy and bumps the bundle's version, as Ranger does.
func (d policyDoc) add(p map[string]any) {
	d["policies"] = append(d.policies(), p)
	d.bump()
}

func (d policyDoc) bump() {
	v, _ := d["policyVersion"].(float64)
	d["policyVersion"] = v + 1
}

func accessItem(groups []string, accesses ...string) map[string]any {
	var acc []any
	for _, a := range accesses {
		acc = append(acc, map[string]any{"type": a, "isAllowed": true})
	}
	return map[string]any{"accesses": acc, "groups": groups}
}

func maskPolicy(id int, db, table, column string, groups []string, maskType, valueExpr string) map[string]any {
	info := map[string]any{"dataMaskType": maskType}
	if valueExpr != "" {
		info["valueExpr"] = valueExpr
	}
	item := accessItem(groups, "select")
	item["dataMaskInfo"] = info
	return map[string]any{
		"id": id, "name": "test mask " + table + "." + column, "policyType": 1, "isEnabled": true,
		"resources": map[string]any{
			"database": map[string]any{"values": []string{db}},
			"table":    map[string]any{"values": []string{table}},
			"column":   map[string]any{"values": []string{column}},
		},
		"dataMaskPolicyItems": []any{item},
	}
}

func rowFilterPolicy(id int, db, table string, groups []string, filter string) map[string]any {
	item := accessItem(groups, "select")
	item["rowFilterInfo"] = map[string]any{"filterExpr": filter}
	return map[string]any{
		"id": id, "name": "test filter " + table, "policyType": 2, "isEnabled": true,
		"resources": map[string]any{
			"database": map[string]any{"values": []string{db}},
			"table":    map[string]any{"values": []string{table}},
		},
		"rowFilterPolicyItems": []any{item},
	}
}

func accessPolicy(id int, db, table, column string, groups []string) map[string]any {
	return map[string]any{
		"id": id, "name": "test access " + db + "." + table, "policyType": 0, "isEnabled": true,
		"resources": map[string]any{
			"database": map[string]any{"values": []string{db}},
			"table":    map[string]any{"values": []string{table}},
			"column":   map[string]any{"values": []string{column}},
		},
		"policyItems": []any{accessItem(groups, "select")},
	}
}
