package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/internal/testrepo"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut strings.Builder
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// Every Ranger conformance file (../shared/ranger/conformance and its
// round2/) passes through `pgranger test`, except the cases listed as
// known differences (policy/policytest, docs/policy-semantics.md). Missing
// fixtures skip it, or fail it with CI=true (testrepo.Shared).
func TestTestCommandConformance(t *testing.T) {
	dir := testrepo.Shared(t, "ranger", "conformance")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	round2, _ := filepath.Glob(filepath.Join(dir, "round2", "test_*.json"))
	if len(files) == 0 || len(round2) == 0 {
		testrepo.MissingShared(t, filepath.Join(dir, "round2"))
	}
	files = append(files, round2...)
	code, out, errOut := runCLI(append([]string{"test"}, files...)...)
	t.Log("\n" + out)
	if code != 0 {
		t.Fatalf("pgranger test: exit %d\n%s%s", code, out, errOut)
	}
	last := lastLine(out)
	if !strings.Contains(last, " passed, 0 failed, ") || strings.HasPrefix(last, "0 ") {
		t.Errorf("last line %q, want N passed, 0 failed, K known-different", last)
	}
	for _, f := range files {
		if !strings.Contains(out, filepath.Base(f)+": ") {
			t.Errorf("no summary for %s", filepath.Base(f))
		}
	}
}

// The demo's decision table passes, in both styles (resource cases and SQL
// cases).
func TestTestCommandExampleDecisions(t *testing.T) {
	file := filepath.Join(testrepo.Root(t), "examples", "policies", "decisions.yaml")
	code, out, errOut := runCLI("test", "-v", file)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "[resource]") || !strings.Contains(out, "[sql]") {
		t.Errorf("want both resource and SQL cases:\n%s", out)
	}
	if last := lastLine(out); !strings.HasSuffix(last, " passed, 0 failed") || strings.HasPrefix(last, "0 ") {
		t.Errorf("last line %q", last)
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A failing case is printed by name with what differs, and the command
// exits 1; a broken file counts as a failure.
func TestTestCommandFailures(t *testing.T) {
	dir := t.TempDir()
	hive := filepath.Join(testrepo.Root(t), "examples", "policies", "hive.json")
	file := writeFile(t, dir, "d.yaml", `
policies: `+hive+`
users:
  bob: {groups: [analysts], attributes: {region: US}}
catalog:
  - table: sales.orders
    columns: [id integer, region text, ssn text]
cases:
  - name: right
    user: bob
    resource: {database: sales, table: orders, column: id}
    expect: {decision: allow, policy: 1}
  - name: wrong decision
    user: bob
    resource: sales.orders.id
    expect: {decision: deny}
  - name: wrong mask
    user: bob
    resource: sales.orders.ssn
    expect: {mask: MASK_HASH, mask-policy: 11}
  - name: wrong filter
    user: bob
    resource: sales.orders
    expect: {filter: none}
  - name: wrong sql
    user: bob
    sql: SELECT id FROM sales.orders
    expect: {error: "42501"}
  - name: expects nothing
    user: bob
    resource: sales.orders
`)
	code, out, _ := runCLI("test", file)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{
		"FAIL d.yaml: [resource] wrong decision\n    select decision: want \"deny\", got \"allow\"",
		"FAIL d.yaml: [resource] wrong mask\n    mask: want \"MASK_HASH\", got \"MASK_SHOW_LAST_4\"\n    mask policy: want 11, got 10",
		"FAIL d.yaml: [resource] wrong filter\n    filter: want \"none\", got \"region = '${{USER.region}}'\"",
		"FAIL d.yaml: [sql] wrong sql\n    decision: want \"deny\", got \"allow\"",
		"FAIL d.yaml: [resource] expects nothing",
		"1 passed, 5 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FAIL d.yaml: [resource] right") {
		t.Errorf("a passing case is reported as failing:\n%s", out)
	}

	// Unknown keys, missing policies, SQL without a catalog, other files.
	bad := map[string]string{
		"typo.yaml":         "policies: " + hive + "\ncases:\n  - name: x\n    user: bob\n    resource: a.b\n    expct: {decision: allow}\n",
		"nopolicy.yaml":     "cases:\n  - name: x\n    user: bob\n    resource: a.b\n    expect: {decision: allow}\n",
		"nocatalog.yaml":    "policies: " + hive + "\ncases:\n  - name: x\n    user: bob\n    sql: SELECT 1\n    expect: {decision: allow}\n",
		"both.yaml":         "policies: " + hive + "\ncases:\n  - name: x\n    user: bob\n    resource: a.b\n    sql: SELECT 1\n",
		"badtype.yaml":      "policies: " + hive + "\ncatalog:\n  - table: a.b\n    columns: [x frobnitz]\ncases:\n  - name: x\n    user: bob\n    resource: a.b\n    expect: {decision: deny}\n",
		"resourcetypo.yaml": "policies: " + hive + "\ncases:\n  - name: x\n    user: bob\n    resource: {database: a, tabel: b}\n    expect: {decision: deny}\n",
		"notes.txt":         "hello",
	}
	for name, text := range bad {
		p := writeFile(t, dir, name, text)
		code, out, _ := runCLI("test", p)
		if code != 1 || !strings.Contains(out, "FAIL "+name+": ") || lastLine(out) != "0 passed, 1 failed" {
			t.Errorf("%s: exit %d\n%s", name, code, out)
		}
	}
	if code, _, errOut := runCLI("test"); code != 2 || !strings.Contains(errOut, "usage: pgranger test") {
		t.Errorf("no files: exit %d %q", code, errOut)
	}
}

// With --config, a decision table that names no policies uses the
// configuration's policy files and static users.
func TestTestCommandConfig(t *testing.T) {
	root := testrepo.Root(t)
	file := writeFile(t, t.TempDir(), "d.yaml", `
cases:
  - name: alice from the config is in compliance
    user: alice
    resource: hr.employees.salary
    expect: {decision: allow, policy: 2}
  - name: carol from the config is in support
    user: carol
    resource: sales.orders.amount
    expect: {mask: MASK_NULL}
`)
	code, out, _ := runCLI("test", "--config", filepath.Join(root, "examples", "pgranger.toml"), file)
	if code != 0 || lastLine(out) != "2 passed, 0 failed" {
		t.Errorf("exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI("test", file); code != 1 || !strings.Contains(out, "no policies") {
		t.Errorf("without --config: exit %d\n%s", code, out)
	}
}
