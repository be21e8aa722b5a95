package interop

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A table of accepted differences and its recognisers must name the same
// differences: a row without a rule, or a rule without a row, is an error.
func TestReadNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	doc := "## Other\n\n| `skip` | x |\n\n## Named\n\n| name | where | why |\n|---|---|---|\n| `one-thing` | all | because |\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cols := []string{"name", "where", "why"}
	rows, err := ReadNamed(path, "## Named", "pkg", cols, []string{"one-thing"})
	if err != nil || !reflect.DeepEqual(rows, []NamedRow{{Name: "one-thing", Cells: []string{"all", "because"}}}) {
		t.Errorf("rows %+v, %v", rows, err)
	}
	for _, c := range []struct {
		rules   []string
		cols    []string
		section string
		want    string
	}{
		{[]string{"other"}, cols, "## Named", path + ": difference one-thing has no rule in pkg that recognises it"},
		{[]string{"one-thing", "other"}, cols, "## Named", path + `: the rule other of pkg has no row under "## Named"`},
		{[]string{"one-thing"}, []string{"name", "why"}, "## Named", path + ": row one-thing: want 2 cells (name, why), got 3"},
		{[]string{"one-thing"}, cols, "## Missing", path + `: no table under "## Missing"`},
	} {
		if _, err := ReadNamed(path, c.section, "pkg", c.cols, c.rules); err == nil || err.Error() != c.want {
			t.Errorf("rules %v, columns %v, %s: got %v, want %s", c.rules, c.cols, c.section, err, c.want)
		}
	}
}
