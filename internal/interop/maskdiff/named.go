package maskdiff

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/pgranger/pgranger/internal/interop"
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

// ParseNamed reads the table under NamedSection of the document at path:
// five cells a row (name in backquotes, column types, Hive, pgranger,
// why).
func ParseNamed(path string) (*Named, error) {
	rows, err := interop.ReadNamed(path, NamedSection, "internal/interop/maskdiff",
		[]string{"name", "column types", "Hive", "pgranger", "why"}, slices.Collect(maps.Keys(rules)))
	if err != nil {
		return nil, err
	}
	n := &Named{}
	for _, r := range rows {
		if !slices.Contains(n.names, r.Name) {
			n.names = append(n.names, r.Name)
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
