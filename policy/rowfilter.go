package policy

import (
	"sort"
	"strings"
)

// evalRowFilter returns the filters for a table.
//
// Resource row-filter policies naming exactly this table are tried by
// priority, then policy name; inside a policy the first matching item
// decides, and an item without a filterExpr (or with an empty one) lets the
// next policy decide. Tag row-filter policies are evaluated the same way for
// each tag of the table (its own tags and its database's), one decision per
// tag. pgranger ANDs every decided filter: the resource filter first, then
// the tag filters in the tags' stored order. (Ranger keeps only the first
// decision; a filter that might be dropped is a filter that might leak, so
// pgranger applies them all.) Each filter comes with the tag it was
// evaluated for (RowFilter.Tags), which ${{TAG…}} in it reads.
func (e *Engine) evalRowFilter(rq *evalReq) RowFilter {
	var out RowFilter
	if e.IsSuperUser(rq.subj) {
		return out
	}
	r := e.reposFor(rq)[0]
	cands := e.filterCandidates(rq, r.filters, r.tagFilters)
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if (a.tag != nil) != (b.tag != nil) {
			return a.tag == nil
		}
		if a.tag != nil && a.tag.order != b.tag.order {
			return a.tag.order < b.tag.order
		}
		return a.p.ordinal < b.p.ordinal
	})
	decidedRes := false
	decidedTag := map[*reqTag]bool{}
	type key struct {
		id   int64
		expr string
		tag  string
	}
	seen := map[key]bool{}
	add := func(c filterCand, expr string) {
		var tag *Tag
		if c.tag != nil {
			tag = c.tag.export()
		}
		out.Exprs = append(out.Exprs, expr)
		out.PolicyIDs = append(out.PolicyIDs, c.p.id)
		out.Tags = append(out.Tags, tag)
	}
	for _, c := range cands {
		if c.tag == nil && decidedRes || c.tag != nil && decidedTag[c.tag] {
			continue
		}
		applies, doubt := c.appliesTo(rq)
		var item *citem
		if applies {
			item, doubt = itemUnderDoubt(c.p.filters, c.rq)
		}
		if doubt {
			// Under doubt no row is shown: a filter that might apply is
			// applied as the most restrictive one.
			add(c, "false")
			continue
		}
		if item == nil || !item.hasFilter {
			continue
		}
		if c.tag == nil {
			decidedRes = true
		} else {
			decidedTag[c.tag] = true
		}
		// One policy's filter applies once. An expression with ${{…}}
		// may read the current tag (TAG), so it applies once per
		// distinct tag.
		k := key{id: c.p.id, expr: item.filterExpr}
		if c.tag != nil && strings.Contains(item.filterExpr, "${{") {
			k.tag = c.tag.key()
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		add(c, item.filterExpr)
	}
	return out
}
