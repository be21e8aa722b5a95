package maskdiff

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/pgranger/pgranger/ranger"
)

// NamedSection is the heading in docs/masks.md whose table lists the
// differences the mask differential accepts.
const NamedSection = "## Differences the mask differential accepts"

// Named is the set of differences docs/masks.md names: only a mismatch
// one of them explains passes.
type Named struct {
	names []string
}

// rule recognises one named difference in a mismatch.
type rule func(m Mismatch) bool

// rules are the recognisers, by the name in the first column of the
// document's table. A row without a rule, or a rule without a row, fails
// ParseNamed.
var rules = map[string]rule{
	"year-before-postgresql": yearBeforePostgres,
}

// yearBeforePostgres: MASK_DATE_SHOW_YEAR of a date in 4714 BC, whose
// January 1 lies before PostgreSQL's first date (4714-11-24 BC). Hive
// returns that January 1; pgranger returns NULL.
func yearBeforePostgres(m Mismatch) bool {
	if m.Mask != ranger.MaskTypeDateShowYear || m.Column.Kind != KindDate || m.Value == nil || m.PG != nil || m.Hive == nil {
		return false
	}
	return strings.HasSuffix(*m.Value, " BC") && strings.HasPrefix(*m.Value, "4714-") && *m.Hive == "4714-01-01 BC"
}

var nameCell = regexp.MustCompile("^`([a-z0-9-]+)`$")

// ParseNamed reads the table under NamedSection of the document at path:
// five cells a row (name in backquotes, column types, Hive, pgranger,
// why).
func ParseNamed(path string) (*Named, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n := &Named{}
	seen := map[string]bool{}
	in, table := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			in = line == NamedSection
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
			return nil, fmt.Errorf("%s: a row of %q names no difference in backquotes: %s", path, NamedSection, line)
		}
		if len(cells) != 5 {
			return nil, fmt.Errorf("%s: row %s: want 5 cells (name, column types, Hive, pgranger, why), got %d", path, m[1], len(cells))
		}
		if _, ok := rules[m[1]]; !ok {
			return nil, fmt.Errorf("%s: difference %s has no rule in internal/interop/maskdiff that recognises it", path, m[1])
		}
		if !seen[m[1]] {
			seen[m[1]] = true
			n.names = append(n.names, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !table {
		return nil, fmt.Errorf("%s: no table under %q", path, NamedSection)
	}
	for name := range rules {
		if !seen[name] {
			return nil, fmt.Errorf("%s: the rule %s of internal/interop/maskdiff has no row under %q", path, name, NamedSection)
		}
	}
	sort.Strings(n.names)
	return n, nil
}

// Names lists the documented differences, sorted.
func (n *Named) Names() []string {
	if n == nil {
		return nil
	}
	return append([]string(nil), n.names...)
}

// Classify returns the documented difference that explains a mismatch,
// "" when none does.
func (n *Named) Classify(m Mismatch) string {
	if n == nil {
		return ""
	}
	for _, name := range n.names {
		if rules[name](m) {
			return name
		}
	}
	return ""
}
