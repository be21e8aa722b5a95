package decisiontable

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/internal/testrepo"
)

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "d.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Resource cases: each mismatch is named with what was expected and got.
func TestResourceCases(t *testing.T) {
	hive := filepath.Join(testrepo.Root(t), "examples", "policies", "hive.json")
	s, err := Load(writeFile(t, `
policies: `+hive+`
users:
  bob: {groups: [analysts], attributes: {region: US}}
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
  - name: expects nothing
    user: bob
    resource: sales.orders
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range s.Run() {
		if r.Kind != "resource" {
			t.Errorf("%s: kind %q", r.Name, r.Kind)
		}
		got[r.Name] = strings.Join(r.Mismatches, "; ")
		if r.OK != (len(r.Mismatches) == 0) {
			t.Errorf("%s: OK %v with %v", r.Name, r.OK, r.Mismatches)
		}
	}
	want := map[string]string{
		"right":          "",
		"wrong decision": `select decision: want "deny", got "allow"`,
		"wrong mask":     `mask: want "MASK_HASH", got "MASK_SHOW_LAST_4"; mask policy: want 11, got 10`,
		"wrong filter":   `filter: want "none", got "region = '${{USER.region}}'"`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %q", name, got[name], w)
		}
	}
	if !strings.HasPrefix(got["expects nothing"], "the case expects nothing") {
		t.Errorf("expects nothing: %q", got["expects nothing"])
	}
}

// Table declarations are built by the caller's hook; without one, or
// when it fails, the table does not load.
func TestCatalogHook(t *testing.T) {
	hive := filepath.Join(testrepo.Root(t), "examples", "policies", "hive.json")
	file := writeFile(t, "policies: "+hive+"\ncatalog:\n  - table: a.b\n    columns: [x integer]\ncases:\n  - name: x\n    user: bob\n    sql: SELECT x FROM a.b\n    expect: {decision: deny}\n")
	if _, err := Load(file, Options{}); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("no hook: %v", err)
	}
	boom := errors.New("boom")
	var seen int
	_, err := Load(file, Options{Catalog: func(n *yaml.Node, _ []string) (*catalog.Snapshot, error) {
		seen = len(n.Content)
		return nil, boom
	}})
	if !errors.Is(err, boom) || seen != 1 {
		t.Errorf("hook: %v, saw %d tables", err, seen)
	}
}

// Malformed tables do not load: unknown keys, no policies, SQL without a
// catalog, both resource and SQL, a misspelt resource key.
func TestLoadErrors(t *testing.T) {
	hive := filepath.Join(testrepo.Root(t), "examples", "policies", "hive.json")
	for name, text := range map[string]string{
		"typo":         "policies: " + hive + "\ncases:\n  - name: x\n    user: bob\n    resource: a.b\n    expct: {decision: allow}\n",
		"nopolicy":     "cases:\n  - name: x\n    user: bob\n    resource: a.b\n    expect: {decision: allow}\n",
		"nocatalog":    "policies: " + hive + "\ncases:\n  - name: x\n    user: bob\n    sql: SELECT 1\n    expect: {decision: allow}\n",
		"both":         "policies: " + hive + "\ncases:\n  - name: x\n    user: bob\n    resource: a.b\n    sql: SELECT 1\n",
		"resourcetypo": "policies: " + hive + "\ncases:\n  - name: x\n    user: bob\n    resource: {database: a, tabel: b}\n    expect: {decision: deny}\n",
		"nocases":      "policies: " + hive + "\n",
	} {
		if _, err := Load(writeFile(t, text), Options{}); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}
