package diffgen

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/pgranger/pgranger/internal/interop"
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
	"ancestor-tags":          ancestorTag,
	"missing-attribute":      missingAttribute,
	"equal-priority":         equalPriority,
	"lone-star-resource":     loneStar,
	"override-allow-on-deny": overrideAllowOnDeny,
	"any-walk-history":       anyWalkHistory,
	"tag-set-order":          tagSetOrder,
	"tag-attr-values":        tagAttrValues,
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

// overrideAllowOnDeny: pgranger denies, and Ranger names a policy of a
// higher priority than pgranger's (an OVERRIDE resource allow after a
// NORMAL tag deny). Ranger 2.9 lets a higher-priority allow replace a
// deny of the same access type (and where that leaves the result open,
// denies under the allowing policy's id); 2.6, and pgranger, keep the
// deny.
func overrideAllowOnDeny(b *ranger.Bundle, q *Request, pg, rg Answer) bool {
	if q.Kind != "access" || pg.Allowed {
		return false
	}
	p, r := findPolicy(b, pg.PolicyID), findPolicy(b, rg.PolicyID)
	return p != nil && r != nil && r.PolicyPriority > p.PolicyPriority
}

// anyWalkHistory: both allow `_any` and report different policies, and
// an access policy with items names neither the user, nor one of the
// groups, nor anyone ({USER}, public). Whether Ranger evaluates such a
// policy's items (and so re-reads the reported policy) depends on which
// users asked before (its items compute their implied grants lazily);
// pgranger answers as Ranger does once they all have.
func anyWalkHistory(b *ranger.Bundle, q *Request, pg, rg Answer) bool {
	if q.Kind != "access" || q.Access != "_any" || !pg.Allowed || !rg.Allowed || pg.PolicyID == rg.PolicyID {
		return false
	}
	names := func(it ranger.RangerPolicyItem) bool {
		if len(it.Users) == 0 && len(it.Groups) == 0 && len(it.Roles) == 0 {
			return true // an item naming nobody: Ranger and pgranger always evaluate
		}
		for _, u := range it.Users {
			if u == q.User || u == "{USER}" || u == "{OWNER}" {
				return true
			}
		}
		for _, g := range it.Groups {
			if g == "public" || slices.Contains(q.Groups, g) {
				return true
			}
		}
		return false
	}
	foreign := func(p *ranger.RangerPolicy) bool {
		if p.PolicyType != ranger.PolicyTypeAccess || p.IsDenyAllElse {
			return false
		}
		var items []ranger.RangerPolicyItem
		items = append(append(append(append(items, p.PolicyItems...), p.DenyPolicyItems...), p.AllowExceptions...), p.DenyExceptions...)
		if len(items) == 0 {
			return false
		}
		for _, it := range items {
			if names(it) {
				return false
			}
		}
		return true
	}
	for i := range b.Policies.Policies {
		if foreign(&b.Policies.Policies[i]) {
			return true
		}
	}
	if tp := b.Policies.TagPolicies; tp != nil {
		for i := range tp.Policies {
			if foreign(&tp.Policies[i]) {
				return true
			}
		}
	}
	return false
}

// tagSetOrder: the requested resource carries two different tags of one
// type, or two tags a deciding tag policy names. Ranger keeps a request's
// tags in a hash set whose order includes an enum's identity hash, so
// which of them a TAGS or GET_TAG_ATTR reads, and which is evaluated
// first, can change from one JVM to the next; pgranger takes them in
// stored order.
func tagSetOrder(b *ranger.Bundle, q *Request, pg, rg Answer) bool {
	if b.Tags == nil {
		return false
	}
	attached := attachedTags(b, q)
	byType := map[string]int{}
	for _, t := range attached {
		byType[t.Type]++
		if byType[t.Type] > 1 {
			return true
		}
	}
	for _, id := range []int64{pg.PolicyID, rg.PolicyID} {
		p := findPolicy(b, id)
		if p == nil || !isTag(b, p) {
			continue
		}
		n := 0
		for _, t := range attached {
			if slices.Contains(p.Resources["tag"].Values, t.Type) {
				n++
			}
		}
		if n > 1 {
			return true
		}
	}
	return false
}

// tagAttrValues: an expression of the bundle reads GET_TAG_ATTR and the
// requested resource carries one tag type twice (two tags, or one tag on
// the resource and on one above it). Ranger 2.9's GET_TAG_ATTR lists the
// attribute of every tag; 2.6's, and pgranger's, one per tag type.
func tagAttrValues(b *ranger.Bundle, q *Request, _, _ Answer) bool {
	if b.Tags == nil {
		return false
	}
	data, err := json.Marshal(b.Policies)
	if err != nil || !strings.Contains(string(data), "GET_TAG_ATTR") && !strings.Contains(string(data), "tagAttr") {
		return false
	}
	n := map[string]int{}
	forAttached(b, q, func(t ranger.RangerTag) {
		n[t.Type]++
	})
	for _, c := range n {
		if c > 1 {
			return true
		}
	}
	return false
}

// attachedTags are the distinct tags (by type and attributes) of the
// ServiceTags resources at or above the requested resource, named exactly
// (ignoring case) at every level they have.
func attachedTags(b *ranger.Bundle, q *Request) []ranger.RangerTag {
	var out []ranger.RangerTag
	seen := map[string]bool{}
	forAttached(b, q, func(t ranger.RangerTag) {
		if k := fmt.Sprint(t.Type, t.Attributes); !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	})
	return out
}

// forAttached calls f for each tag of each ServiceTags resource at or
// above the requested resource, named exactly (ignoring case) at every
// level it has.
func forAttached(b *ranger.Bundle, q *Request, f func(ranger.RangerTag)) {
	levels := []struct{ name, value string }{{"database", q.Database}, {"table", q.Table}, {"column", q.Column}}
	depth := 0
	for depth < 3 && levels[depth].value != "" {
		depth++
	}
	for _, sr := range b.Tags.ServiceResources {
		if len(sr.ResourceElements) == 0 || len(sr.ResourceElements) > depth {
			continue
		}
		ok := true
		for i := 0; i < len(sr.ResourceElements) && ok; i++ {
			el, has := sr.ResourceElements[levels[i].name]
			ok = has && len(el.Values) == 1 && strings.EqualFold(el.Values[0], levels[i].value)
		}
		if !ok {
			continue
		}
		for _, id := range b.Tags.ResourceToTagIDs[sr.ID] {
			if t, ok := b.Tags.Tags[id]; ok {
				f(t)
			}
		}
	}
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

// ParseNamed reads the table under NamedSection of the document at path
// and keeps the rows for Ranger release version: the first column is a
// difference's name in backquotes, the second the releases it holds for
// ("all", or releases separated by commas).
func ParseNamed(path, version string) (*Named, error) {
	rows, err := interop.ReadNamed(path, NamedSection, "internal/interop/diffgen",
		[]string{"name", "Ranger releases", "Ranger", "pgranger", "why"}, slices.Collect(maps.Keys(rules)))
	if err != nil {
		return nil, err
	}
	n := &Named{names: map[string]bool{}}
	for _, r := range rows {
		if forVersion(r.Cells[0], version) {
			n.names[r.Name] = true
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
