package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// One JSON line per statement, with Ranger's audit field names, for an
// allowed masked read and a denial; never the statement's text.
func TestAuditRecords(t *testing.T) {
	p := startProxy(t, proxyOptions{})
	conn := connect(t, p, "bob")
	rows(t, conn, "SELECT ssn FROM sales.orders WHERE customer = 'Ada Lovelace'", pgx.QueryExecModeSimpleProtocol)
	tryRows(conn, "SELECT salary FROM hr.employees", pgx.QueryExecModeSimpleProtocol)

	var recs []map[string]any
	eventually(t, 5*time.Second, func() string {
		data, _ := os.ReadFile(filepath.Join(p.dir, "audit.jsonl"))
		recs = nil
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil {
				recs = append(recs, m)
			}
		}
		if len(recs) < 2 {
			return "want two audit records, got: " + string(data)
		}
		if strings.Contains(string(data), "Ada Lovelace") {
			t.Fatalf("the audit log contains a statement literal:\n%s", data)
		}
		return ""
	})
	allowed, denied := recs[len(recs)-2], recs[len(recs)-1]
	for k, want := range map[string]any{"reqUser": "bob", "repo": "demo_hive", "repoType": 3.0, "resource": "sales/orders/customer,ssn",
		"resType": "@column", "access": "select", "action": "SELECT", "result": 1.0, "policy": 1.0, "enforcer": "ranger-acl",
		"agent": "pgranger", "cliIP": "127.0.0.1", "cluster": "demo"} {
		if allowed[k] != want {
			t.Errorf("allowed record %s = %v, want %v (%v)", k, allowed[k], want, allowed)
		}
	}
	if ids, _ := allowed["maskPolicies"].([]any); len(ids) == 0 {
		t.Errorf("allowed record has no mask policies: %v", allowed)
	}
	if f, _ := allowed["rowFilterPolicies"].([]any); len(f) != 1 || f[0] != 20.0 {
		t.Errorf("row filter policies = %v, want [20]", allowed["rowFilterPolicies"])
	}
	for k, want := range map[string]any{"reqUser": "bob", "action": "SELECT", "result": 0.0, "resource": "hr/employees/salary", "resType": "@column", "access": "select", "policy": 3.0} {
		if denied[k] != want {
			t.Errorf("denied record %s = %v, want %v (%v)", k, denied[k], want, denied)
		}
	}
	if fp, _ := denied["fingerprint"].(string); fp == "" {
		t.Errorf("denied record has no fingerprint: %v", denied)
	}
}
