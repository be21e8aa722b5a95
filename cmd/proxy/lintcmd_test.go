package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/internal/testrepo"
)

// The findings are tested in package lint; here, what the command prints,
// with each finding's severity, and its exit status.
func TestLintCommand(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(testrepo.Root(t), "lint", "testdata", "findings.json") // the findings of package lint's test
	code, out, errOut := runCLI("lint", "--at", "2026-01-01T00:00:00Z", file)
	if code != 1 || !strings.Contains(errOut, "6 error(s), 6 warning(s)") {
		t.Errorf("exit %d, want 1 (stderr %q)", code, errOut)
	}
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
	got := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}

	// Clean policies: no output, exit 0.
	clean := writeFile(t, dir, "clean.json", `{"serviceName": "svc", "policies": [
    {"id": 1, "name": "clean", "policyLabels": ["owner:data-team"],
     "resources": {"database": {"values": ["sales"]}, "table": {"values": ["orders"]}, "column": {"values": ["*"]}},
     "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]}]}`)
	for _, args := range [][]string{{"lint", clean}, {"lint", "--strict", clean}} {
		if code, out, errOut := runCLI(args...); code != 0 || out != "" || errOut != "" {
			t.Errorf("%v: exit %d %q %q", args, code, out, errOut)
		}
	}
	// The demo policies only lack owner labels: nine warnings, which pass
	// unless --strict.
	demo := filepath.Join(testrepo.Root(t), "examples", "policies", "hive.json")
	code, out, errOut = runCLI("lint", demo)
	if code != 0 || strings.Count(out, "warning: policy ") != 9 || strings.Count(out, "has no owner label") != 9 ||
		strings.Count(out, "\n") != 9 || !strings.Contains(errOut, "0 error(s), 9 warning(s)") {
		t.Errorf("demo: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := runCLI("lint", "--strict", demo); code != 1 {
		t.Errorf("demo --strict: exit %d, want 1", code)
	}
	// Several files: each line names its file.
	code, out, _ = runCLI("lint", "--at", "2026-01-01T00:00:00Z", clean, demo)
	if code != 0 || !strings.HasPrefix(out, demo+": warning: policy ") {
		t.Errorf("two files: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI("lint"); code != 2 || !strings.Contains(errOut, "usage: pgranger lint") {
		t.Errorf("no file: exit %d %q", code, errOut)
	}
	bad := writeFile(t, dir, "bad.json", `{"policies": [`)
	if code, _, errOut := runCLI("lint", bad); code != 2 || !strings.Contains(errOut, "bad.json") {
		t.Errorf("bad json: exit %d %q", code, errOut)
	}
}
