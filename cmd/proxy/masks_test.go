package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/internal/testrepo"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// `pgranger masks --stored-ddl` offline: the demo policies mask
// sales.orders.ssn MASK_SHOW_LAST_4 (stored), email MASK_HASH (cannot be
// stored: convert_to is not immutable), amount MASK_NULL and order_date
// (a date) for some groups, hr.employees.email CUSTOM: one statement, with
// pgranger's exact expression.
func TestMasksStoredDDLOffline(t *testing.T) {
	root := testrepo.Root(t)
	cfg := filepath.Join(root, "examples", "pgranger.toml")
	cat := filepath.Join(root, "examples", "policies", "decisions.yaml")
	code, out, errOut := runCLI("masks", "--stored-ddl", "--config", cfg, "--catalog", cat)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	expr, err := sqlrewrite.MaskSQL("MASK_SHOW_LAST_4", sqlrewrite.ColumnType{OID: 25, BaseOID: 25, TypMod: -1, SQLName: "text"}, `"ssn"`, sqlrewrite.MaskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `ALTER TABLE "sales"."orders" ADD COLUMN IF NOT EXISTS "ssn__pgranger_mask_show_last_4" text GENERATED ALWAYS AS (` + expr + ") STORED;\n"
	if !strings.Contains(out, want) || strings.Count(out, "ALTER TABLE") != 1 {
		t.Errorf("output:\n%s\nwant the one statement:\n%s", out, want)
	}
	if code, _, _ := runCLI("masks", "--config", cfg); code != 2 {
		t.Errorf("without --stored-ddl: exit %d, want 2", code)
	}
}
