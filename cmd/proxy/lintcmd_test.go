package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The findings themselves are tested in package lint; here, what the
// command prints and its exit status.
func TestLintCommand(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "p.json", `{"serviceName": "svc", "policies": [
    {"id": 3, "name": "no labels", "description": "d",
     "resources": {"database": {"values": ["hr"]}, "table": {"values": ["t"]}, "column": {"values": ["c"]}},
     "policyItems": [{"accesses": [{"type": "select"}], "users": ["{USER}"]}]},
    {"id": 5, "name": "expired", "policyLabels": ["owner:x"],
     "resources": {"database": {"values": ["a"]}, "table": {"values": ["t"]}, "column": {"values": ["c"]}},
     "validitySchedules": [{"startTime": "2020/01/01 00:00:00", "endTime": "2024/12/31 23:59:59", "timeZone": "Europe/Berlin"}],
     "policyItems": [{"accesses": [{"type": "select"}], "groups": ["g"]}]}]}`)
	code, out, errOut := runCLI("lint", "--at", "2026-01-01T00:00:00Z", file)
	if code != 1 {
		t.Errorf("exit %d, want 1 (stderr %q)", code, errOut)
	}
	want := `policy 3 "no labels": has no owner label (policyLabels is empty)
policy 5 "expired": validity schedule ended 2024/12/31 23:59:59 Europe/Berlin
policy 5 "expired": every validity schedule has ended: the policy never applies
`
	if out != want {
		t.Errorf("findings:\n%s\nwant:\n%s", out, want)
	}
	// Several files: each line names its file.
	if code, out, _ := runCLI("lint", "--at", "2026-01-01T00:00:00Z", file, file); code != 1 || strings.Count(out, file+": policy ") != 6 {
		t.Errorf("two files: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI("lint", "--at", "yesterday", file); code != 2 || !strings.Contains(errOut, "--at") {
		t.Errorf("bad --at: exit %d %q", code, errOut)
	}

	// Clean policies: no output, exit 0.
	clean := writeFile(t, dir, "clean.json", `{"serviceName": "svc", "policies": [
    {"id": 1, "name": "clean", "policyLabels": ["owner:data-team"],
     "resources": {"database": {"values": ["sales"]}, "table": {"values": ["orders"]}, "column": {"values": ["*"]}},
     "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]}]}`)
	if code, out, _ := runCLI("lint", clean); code != 0 || out != "" {
		t.Errorf("clean: exit %d %q", code, out)
	}
	// The demo policies only lack owner labels.
	code, out, _ = runCLI("lint", filepath.Join(repoRoot(t), "examples", "policies", "hive.json"))
	if code != 1 || strings.Count(out, "has no owner label") != strings.Count(out, "\n") || strings.Count(out, "\n") != 9 {
		t.Errorf("demo: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI("lint"); code != 2 || !strings.Contains(errOut, "usage: pgranger lint") {
		t.Errorf("no file: exit %d %q", code, errOut)
	}
	bad := writeFile(t, dir, "bad.json", `{"policies": [`)
	if code, _, errOut := runCLI("lint", bad); code != 2 || !strings.Contains(errOut, "bad.json") {
		t.Errorf("bad json: exit %d %q", code, errOut)
	}
}
