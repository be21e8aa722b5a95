package diffgen

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/pgranger/pgranger/ranger"
)

// NamedSection is the heading in docs/policy-semantics.md whose table
// lists the differences the differential accepts.
const NamedSection = "## Differences the decision differential accepts"

// Named is the differences docs/policy-semantics.md names for one Ranger
// release: only a mismatch one of them explains passes.
type Named struct {
	names map[string]bool
}

// rule recognises one named difference in a mismatch.
type rule func(b *ranger.Bundle, q *Request, pg, rg Answer) bool

// rules are the recognisers, by the name the document's table gives in
// its first column. A rule the document does not list is not applied;
// a row without a rule fails ParseNamed.
var rules = map[string]rule{
	"ancestor-tags":      ancestorTag,
	"missing-attribute":  missingAttribute,
	"equal-priority":     equalPriority,
	"lone-star-resource": loneStar,
}

// ancestorTag: a ServiceTags resource above the requested one (a
// database's tag and a request on its table, a table's and its column)
// carries a tag. Ranger 2.6 does not attach such a tag; 2.9 and pgranger
// do.
func ancestorTag(b *ranger.Bundle, q *Request, _, _ Answer) bool {
	if b.Tags == nil {
		return false
	}
	levels := []struct{ name, value string }{{"database", q.Database}, {"table", q.Table}, {"column", q.Column}}
	depth := 0
	for depth < 3 && levels[depth].value != "" {
		depth++
	}
	for _, sr := range b.Tags.ServiceResources {
		if len(b.Tags.ResourceToTagIDs[sr.ID]) == 0 || len(sr.ResourceElements) >= depth {
			continue
		}
		ok := true
		for i := 0; i < len(sr.ResourceElements) && ok; i++ {
			el, has := sr.ResourceElements[levels[i].name]
			ok = has && len(el.Values) == 1 && strings.EqualFold(el.Values[0], levels[i].value)
		}
		if ok {
			return true
		}
	}
	return false
}

// missingAttribute: a ${{…}} of the deciding mask or filter reads an
// attribute the user or group does not have. Ranger pastes ""; pgranger's
// SQL layer denies the table.
func missingAttribute(_ *ranger.Bundle, _ *Request, pg, rg Answer) bool {
	return strings.Contains(pg.Err, "is missing") && pg.PolicyID == rg.PolicyID && pg.MaskType == rg.MaskType
}

// equalPriority: pgranger and Ranger chose different mask or row-filter
// policies of one priority, both resource policies or both tag policies.
func equalPriority(b *ranger.Bundle, q *Request, pg, rg Answer) bool {
	if q.Kind == "access" || pg.PolicyID == rg.PolicyID {
		return false
	}
	p, r := findPolicy(b, pg.PolicyID), findPolicy(b, rg.PolicyID)
	return p != nil && r != nil && p.PolicyType == r.PolicyType && p.PolicyPriority == r.PolicyPriority && isTag(b, p) == isTag(b, r)
}

// loneStar: the mask or row-filter policy pgranger applies names a
// database, table or column "*", where the hive service-def turns
// wildcards off. Ranger matches such a value for some items and not for
// others; pgranger always does.
func loneStar(b *ranger.Bundle, q *Request, pg, rg Answer) bool {
	if q.Kind == "access" {
		return false
	}
	for _, id := range []int64{pg.PolicyID, rg.PolicyID} {
		if p := findPolicy(b, id); p != nil && p.PolicyType != ranger.PolicyTypeAccess {
			for _, res := range p.Resources {
				for _, v := range res.Values {
					if v != "" && strings.Trim(v, "*") == "" {
						return true
					}
				}
			}
		}
	}
	return false
}

func findPolicy(b *ranger.Bundle, id int64) *ranger.RangerPolicy {
	for i := range b.Policies.Policies {
		if b.Policies.Policies[i].ID == id {
			return &b.Policies.Policies[i]
		}
	}
	if tp := b.Policies.TagPolicies; tp != nil {
		for i := range tp.Policies {
			if tp.Policies[i].ID == id {
				return &tp.Policies[i]
			}
		}
	}
	return nil
}

func isTag(b *ranger.Bundle, p *ranger.RangerPolicy) bool {
	_, ok := p.Resources["tag"]
	return ok
}

var nameCell = regexp.MustCompile("^`([a-z0-9-]+)`$")

// ParseNamed reads the table under NamedSection of the document at path
// and keeps the rows for Ranger release version: the first column is a
// difference's name in backquotes, the second the releases it holds for
// ("all", or releases separated by commas).
func ParseNamed(path, version string) (*Named, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n := &Named{names: map[string]bool{}}
	seen := map[string]bool{}
	in := false
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
			return nil, fmt.Errorf("%s: row %s: want 5 cells (name, Ranger releases, Ranger, pgranger, why), got %d", path, m[1], len(cells))
		}
		if _, ok := rules[m[1]]; !ok {
			return nil, fmt.Errorf("%s: difference %s has no rule in internal/interop/diffgen that recognises it", path, m[1])
		}
		seen[m[1]] = true
		if forVersion(strings.TrimSpace(cells[1]), version) {
			n.names[m[1]] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("%s: no table under %q", path, NamedSection)
	}
	for name := range rules {
		if !seen[name] {
			return nil, fmt.Errorf("%s: the rule %s of internal/interop/diffgen has no row under %q", path, name, NamedSection)
		}
	}
	return n, nil
}

func forVersion(cell, version string) bool {
	if cell == "all" {
		return true
	}
	for _, v := range strings.Split(cell, ",") {
		if strings.TrimSpace(v) == version {
			return true
		}
	}
	return false
}

// Names lists the documented differences, sorted.
func (n *Named) Names() []string {
	var out []string
	for k := range n.names {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Classify returns the documented difference explaining a mismatch, ""
// when none does.
func (n *Named) Classify(b *ranger.Bundle, q *Request, pg, rg Answer) string {
	if n == nil {
		return ""
	}
	for _, name := range n.Names() {
		if rules[name](b, q, pg, rg) {
			return name
		}
	}
	return ""
}
