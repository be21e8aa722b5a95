package interop

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// NamedRow is one row of a table of accepted differences: the
// difference's name and the row's cells after it, trimmed.
type NamedRow struct {
	Name  string
	Cells []string
}

var nameCell = regexp.MustCompile("^`([a-z0-9-]+)`$")

// ReadNamed reads the table under the heading section ("## …") of the
// Markdown document at path, the table a differential reads to know which
// differences pass (docs/policy-semantics.md, docs/masks.md). Every row
// has len(columns) cells, the first a difference's name in backquotes;
// every name must be one of rules and every rule must have a row, so that
// the document and the recognisers (in package owner) cannot drift apart.
func ReadNamed(path, section, owner string, columns, rules []string) ([]NamedRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	known := map[string]bool{}
	for _, r := range rules {
		known[r] = true
	}
	var rows []NamedRow
	seen := map[string]bool{}
	in, table := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			in = line == section
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		table = true
		cells := strings.Split(strings.Trim(line, "|"), "|")
		first := strings.TrimSpace(cells[0])
		if first == "name" || strings.HasPrefix(first, "---") {
			continue
		}
		m := nameCell.FindStringSubmatch(first)
		if m == nil {
			return nil, fmt.Errorf("%s: a row of %q names no difference in backquotes: %s", path, section, line)
		}
		if len(cells) != len(columns) {
			return nil, fmt.Errorf("%s: row %s: want %d cells (%s), got %d", path, m[1], len(columns), strings.Join(columns, ", "), len(cells))
		}
		if !known[m[1]] {
			return nil, fmt.Errorf("%s: difference %s has no rule in %s that recognises it", path, m[1], owner)
		}
		seen[m[1]] = true
		row := NamedRow{Name: m[1]}
		for _, c := range cells[1:] {
			row.Cells = append(row.Cells, strings.TrimSpace(c))
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !table {
		return nil, fmt.Errorf("%s: no table under %q", path, section)
	}
	for _, r := range rules {
		if !seen[r] {
			return nil, fmt.Errorf("%s: the rule %s of %s has no row under %q", path, r, owner, section)
		}
	}
	return rows, nil
}
