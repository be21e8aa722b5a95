package policy

import (
	"sort"
	"strings"

	"github.com/pgranger/pgranger/ranger"
)

type filterCand struct {
	p   *cpolicy
	tag *reqTag  // nil for a resource policy
	rq  *evalReq // the request the policy is evaluated with
}

func matchRank(m matchType) int {
	switch m {
	case mtSelf:
		return 0
	case mtSelfAndAllDescendants:
		return 1
	case mtAncestor:
		return 2
	case mtDescendant:
		return 3
	}
	return 4
}

// evalMask picks the mask for a column.
//
// Candidates are data-mask policies whose resources name exactly this
// column (mask resources have no wildcards in the stock hive service-def),
// and tag data-mask policies for the column's tags (a table's tags cover
// its columns). They are tried by priority, highest first; within a
// priority, tag policies come before resource policies (Ranger's order,
// Options.MaskPrecedence "tag") or after them ("resource"). Among tag
// candidates of one priority: the tag's match (column, then table, then
// database), the tag's stored order, then policy name; among resource
// candidates: policy name. Inside a policy the items are tried in written
// order and the first matching item decides; a MASK_NONE item decides
// "unmasked", an item without dataMaskInfo lets the next policy decide.
// The first decision ends the search, so a decision at priority p shuts
// out everything at or below p.
func (e *Engine) evalMask(rq *evalReq) Mask {
	if e.IsSuperUser(rq.subj) {
		return Mask{}
	}
	r := e.reposFor(rq)[0]
	cands := e.filterCandidates(rq, r.masks, r.tagMasks)
	tagFirst := e.opts.MaskPrecedence != "resource"
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.p.priority != b.p.priority {
			return a.p.priority > b.p.priority
		}
		if (a.tag != nil) != (b.tag != nil) {
			return (a.tag != nil) == tagFirst
		}
		if a.tag != nil {
			if ra, rb := matchRank(a.tag.mt), matchRank(b.tag.mt); ra != rb {
				return ra < rb
			}
			if a.tag.order != b.tag.order {
				return a.tag.order < b.tag.order
			}
		}
		return a.p.ordinal < b.p.ordinal
	})
	for _, c := range cands {
		applies, doubt := c.appliesTo(rq)
		if doubt {
			return restrictedMask(c.p.id)
		}
		if !applies {
			continue
		}
		item, doubt := itemUnderDoubt(c.p.masks, c.rq)
		if doubt {
			return restrictedMask(c.p.id)
		}
		if item == nil || item.maskInfo == nil {
			continue
		}
		return e.buildMask(c, item.maskInfo)
	}
	return Mask{}
}

// filterCandidates collects the mask (or row-filter) policies that may
// apply: resource policies from the index, and tag policies for each tag of
// the resource that covers it.
func (e *Engine) filterCandidates(rq *evalReq, res, tags *policySet) []filterCand {
	var cands []filterCand
	for _, ord := range res.index.candidates(rq.res) {
		p := res.policies[ord]
		if p.applicable(rq.at) {
			cands = append(cands, filterCand{p: p, rq: rq})
		}
	}
	if tags == nil {
		return cands
	}
	for _, t := range rq.tags {
		if !scopeAccepts(t.mt, false, true) {
			continue
		}
		trq := e.tagRequest(rq, t)
		for _, ord := range tags.index.candidates(trq.res) {
			p := tags.policies[ord]
			if p.applicable(rq.at) && tagPolicyMatches(trq, p) {
				cands = append(cands, filterCand{p: p, tag: t, rq: trq})
			}
		}
	}
	return cands
}

// appliesTo checks the resource match (exact: SELF or
// SELF_AND_ALL_DESCENDANTS) and the policy-level conditions. doubt reports
// that the answer depends on something pgranger cannot evaluate (a
// resource value or condition it does not implement); the caller then
// restricts instead of skipping, since skipping a mask or a filter is what
// would leak (conditions.go).
func (c filterCand) appliesTo(rq *evalReq) (applies, doubt bool) {
	if c.tag == nil {
		matched := false
		for _, pm := range c.p.resources {
			mt, unknown := pm.matchType(rq.res, &rq.tc)
			if unknown {
				doubt = true
				continue
			}
			if mt == mtSelf || mt == mtSelfAndAllDescendants {
				matched = true
				break
			}
		}
		if !matched {
			return false, doubt
		}
	}
	switch evalConditions(c.p.conds, c.rq) {
	case condTrue:
		return true, false
	case condUnknown:
		return false, true
	}
	return false, false
}

// itemUnderDoubt finds the first item of items that matches the subject
// and access; doubt is set when that item's conditions cannot be evaluated.
func itemUnderDoubt(items []*citem, rq *evalReq) (item *citem, doubt bool) {
	for _, it := range items {
		if !it.matchesSubject(rq) || !it.matchesAccess("select") {
			continue
		}
		switch evalConditions(it.conds, rq) {
		case condTrue:
			return it, false
		case condUnknown:
			return nil, true
		}
	}
	return nil, false
}

// restrictedMask is the answer under doubt: the column is shown as a typed
// NULL, whatever the doubtful policy would have decided.
func restrictedMask(id int64) Mask {
	return Mask{Type: ranger.MaskTypeNull, PolicyID: id, Unmappable: true}
}

func (e *Engine) buildMask(c filterCand, info *ranger.RangerPolicyItemDataMaskInfo) Mask {
	m := Mask{PolicyID: c.p.id}
	typ := strings.TrimSpace(info.DataMaskType)
	if c.tag != nil {
		m.Tag = c.tag.typ
		m.CurrentTag = c.tag.export()
		if strings.HasPrefix(typ, e.componentPrefix) {
			typ = typ[len(e.componentPrefix):]
		} else if strings.Contains(typ, ":") {
			m.Type, m.Unmappable = typ, true
			return m
		}
	}
	if typ == "" || strings.EqualFold(typ, ranger.MaskTypeNone) {
		return m
	}
	m.Type = typ
	m.ValueExpr = info.ValueExpr
	if mt := e.sd.maskTypes[typ]; mt != nil {
		m.Transformer = mt.Transformer
	} else if mt := e.sd.maskFolded[strings.ToLower(typ)]; mt != nil {
		m.Transformer = mt.Transformer
	}
	return m
}
