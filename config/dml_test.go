package config

import (
	"strings"
	"testing"
)

// policy.dml-row-filter and policy.allow-ddl (sqlrewrite dml.go, ddl.go).
func TestDMLRowFilterAndAllowDDL(t *testing.T) {
	c, err := Load(write(t, minimal), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy.DMLRowFilter != "deny" || c.Policy.AllowDDL {
		t.Errorf("defaults: dml-row-filter = %q, allow-ddl = %v; want deny, false", c.Policy.DMLRowFilter, c.Policy.AllowDDL)
	}
	c, err = Load(write(t, minimal+"\n[policy]\ndml-row-filter = \"apply\"\nallow-ddl = true\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy.DMLRowFilter != "apply" || !c.Policy.AllowDDL {
		t.Errorf("dml-row-filter = %q, allow-ddl = %v; want apply, true", c.Policy.DMLRowFilter, c.Policy.AllowDDL)
	}
	c, err = Load(write(t, minimal), []string{"PGRANGER_POLICY__DML_ROW_FILTER=apply"})
	if err != nil || c.Policy.DMLRowFilter != "apply" {
		t.Errorf("env override: %v, %+v", err, c)
	}
	for _, bad := range []string{"allow", "Apply", ""} {
		_, err := Load(write(t, minimal+"\n[policy]\ndml-row-filter = \""+bad+"\"\n"), nil)
		if err == nil || !strings.Contains(err.Error(), "policy.dml-row-filter") {
			t.Errorf("dml-row-filter = %q: want an error naming the key, got %v", bad, err)
		}
	}
}
