package policytest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/internal/testrepo"
)

// docRows reads the "Known differences" table of docs/policy-semantics.md:
// file | kind | case | aspect | Ranger | pgranger, and why.
func docRows(t *testing.T) []string {
	t.Helper()
	dir := testrepo.Root(t)
	data, err := os.ReadFile(filepath.Join(dir, "docs", "policy-semantics.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n### Known differences\n")
	if !ok {
		t.Fatal(`docs/policy-semantics.md has no "### Known differences" section`)
	}
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| file |") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 6 {
			t.Errorf("a row without 6 cells: %s", line)
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[4] == "" || cells[5] == "" {
			t.Errorf("a row without Ranger's behaviour or pgranger's reason: %s", line)
		}
		rows = append(rows, strings.Join([]string{cells[0], cells[1], strings.Trim(cells[2], "`"), cells[3]}, " | "))
	}
	return rows
}

// The runner accepts a difference only where the documentation names its
// file, kind and case: the two lists are the same.
func TestKnownDifferencesDocumented(t *testing.T) {
	doc := docRows(t)
	var code []string
	for _, kd := range KnownDifferences {
		code = append(code, strings.Join([]string{kd.File, kd.Kind, kd.Case, string(kd.Aspect)}, " | "))
		if kd.Ranger == "" || kd.Reason == "" {
			t.Errorf("%s %q: no Ranger behaviour or reason", kd.File, kd.Case)
		}
	}
	sort.Strings(doc)
	sort.Strings(code)
	in := func(list []string, s string) bool {
		i := sort.SearchStrings(list, s)
		return i < len(list) && list[i] == s
	}
	for _, r := range code {
		if !in(doc, r) {
			t.Errorf("accepted by the runner but not in docs/policy-semantics.md: %s", r)
		}
	}
	for _, r := range doc {
		if !in(code, r) {
			t.Errorf("in docs/policy-semantics.md but not in KnownDifferences: %s", r)
		}
	}
	if len(doc) != len(code) {
		t.Errorf("%d rows documented, %d in the runner", len(doc), len(code))
	}
}
