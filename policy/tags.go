package policy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// reqTag is a tag attached to the requested resource (RangerTagForEval).
type reqTag struct {
	typ   string
	attrs map[string]string
	mt    matchType // how the tagged resource relates to the requested one
	order int       // stored order: resources in ServiceTags order, then resourceToTagIds order
}

// tagStore holds ServiceTags prepared for lookups: each tagged resource gets
// a resource matcher built with the service's own (access) resource defs,
// as RangerTagEnricher does.
type tagStore struct {
	resources []taggedResource
	index     *resIndex
	all       []*storedTag // every tag, for `_any` requests on no resource
}

type taggedResource struct {
	matcher *policyResMatcher
	tags    []*storedTag
}

type storedTag struct {
	id        int64
	typ       string
	attrs     map[string]string
	schedules []*schedule
	order     int
	// same is what makes two tags one for Ranger: its request's tags are
	// a set of RangerTagForEval, equal when type, attributes, options and
	// validity periods are (and the match type, added per request).
	same string
}

func newTagStore(sd *serviceDef, st *ranger.ServiceTags, dbIdx, tblIdx int) *tagStore {
	view := sd.views[viewAccess]
	ts := &tagStore{index: newResIndex(view, dbIdx, tblIdx)}
	order := 0
	byID := map[int64]*storedTag{}
	tagFor := func(id int64) *storedTag {
		if t, ok := byID[id]; ok {
			return t
		}
		tag, ok := st.Tags[id]
		if !ok {
			return nil
		}
		t := &storedTag{id: id, typ: tag.Type, attrs: map[string]string(tag.Attributes), order: order}
		t.same = tagSameKey(tag)
		order++
		for _, vp := range tag.ValidityPeriods {
			t.schedules = append(t.schedules, newSchedule(vp))
		}
		byID[id] = t
		ts.all = append(ts.all, t)
		return t
	}
	for i := range st.ServiceResources {
		sr := &st.ServiceResources[i]
		var tags []*storedTag
		for _, id := range st.ResourceToTagIDs[sr.ID] {
			if t := tagFor(id); t != nil {
				tags = append(tags, t)
			}
		}
		if len(tags) == 0 {
			continue
		}
		pm := newPolicyResMatcher(sd, view, sr.ResourceElements)
		if !pm.ok {
			continue // Ranger drops resources it cannot build a matcher for
		}
		ts.resources = append(ts.resources, taggedResource{matcher: pm, tags: tags})
		ts.index.add(int32(len(ts.resources)-1), pm)
	}
	return ts
}

// find returns the tags that apply to the request (RangerTagEnricher.
// findMatchingTags): a tagged resource matching as SELF,
// SELF_AND_ALL_DESCENDANTS or ANCESTOR (a tag on a table applies to its
// columns), and DESCENDANT too for `_any` and for requests whose matching
// scope is SELF_OR_DESCENDANTS. Tags outside their
// validityPeriods are left out, and of equal tags (two ids with the same
// type, attributes, options and validity periods, matched the same way)
// the first in stored order is kept, as Ranger's set of them holds one.
func (ts *tagStore) find(rq *evalReq) []*reqTag {
	var out []*reqTag
	seen := map[string]bool{}
	add := func(t *storedTag, mt matchType) {
		if !scheduleApplies(t.schedules, rq.at) {
			return
		}
		k := t.same + "\x00" + mt.String()
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, &reqTag{typ: t.typ, attrs: t.attrs, mt: mt, order: t.order})
	}
	if rq.res.nkeys == 0 && rq.isAny {
		for _, t := range ts.all {
			add(t, mtDescendant)
		}
		return out
	}
	for _, ord := range ts.index.candidates(rq.res) {
		tr := &ts.resources[ord]
		mt, _ := tr.matcher.matchType(rq.res, &rq.tc)
		switch mt {
		case mtSelf, mtSelfAndAllDescendants, mtAncestor:
		case mtDescendant:
			if !rq.descScope {
				continue
			}
		default:
			continue
		}
		for _, t := range tr.tags {
			add(t, mt)
		}
	}
	return out
}

// export copies the tag for callers outside the package.
func (t *reqTag) export() *Tag {
	attrs := make(map[string]string, len(t.attrs))
	for k, v := range t.attrs {
		attrs[k] = v
	}
	return &Tag{Type: t.typ, Attributes: attrs, MatchType: t.mt.String()}
}

// key identifies what an expression evaluated for the tag can see: its
// type, match type and attributes.
func (t *reqTag) key() string {
	var b strings.Builder
	b.WriteString(t.typ)
	b.WriteByte(0)
	b.WriteString(t.mt.String())
	keys := make([]string, 0, len(t.attrs))
	for k := range t.attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte(1)
		b.WriteString(t.attrs[k])
	}
	return b.String()
}

func scheduleApplies(ss []*schedule, at time.Time) bool {
	if len(ss) == 0 {
		return true
	}
	for _, s := range ss {
		if s.applicable(at) {
			return true
		}
	}
	return false
}

// tagRequest is the request a tag policy is evaluated with: the resource is
// {tag: <type>} and the current tag is set for ctx.isAccessedBefore and
// friends (RangerTagAccessRequest).
func (e *Engine) tagRequest(rq *evalReq, t *reqTag) *evalReq {
	trq := *rq
	rr := newReqResource(len(e.tagSD.names))
	rr.owner = rq.res.owner
	rr.set(e.tagSD.idxOf("tag"), t.typ)
	trq.res = rr
	trq.tc.owner = rr.owner
	trq.curTag = t
	return &trq
}

// tagPolicyMatches reports whether a tag policy's resource names the tag's
// type (the tag service-def's "tag" resource: exact and case-sensitive in
// the stock def).
func tagPolicyMatches(trq *evalReq, p *cpolicy) bool {
	for _, pm := range p.resources {
		mt, _ := pm.matchType(trq.res, &trq.tc)
		if mt == mtSelf || mt == mtSelfAndAllDescendants {
			return true
		}
	}
	return false
}

// tagSameKey is the content RangerTagForEval.equals compares, bar the
// match type: JSON of type, attributes, options and validity periods
// (encoding/json writes map keys sorted, so equal maps give equal text).
func tagSameKey(t ranger.RangerTag) string {
	b, err := json.Marshal([]any{t.Type, t.Attributes, t.Options, t.ValidityPeriods})
	if err != nil {
		return fmt.Sprintf("id %d", t.ID) // cannot happen for decoded JSON; never merge then
	}
	return string(b)
}
