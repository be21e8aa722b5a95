package policy

import "slices"

// resIndex narrows the policies worth matching against a request. Ranger
// uses one trie per resource; two levels of hash tables on the literal
// values of the first two resources (database and table for hive, tag for
// tag policies) give the same pruning for the requests a SQL proxy makes.
// A resource set lands in a "literal" bucket only if its values are plain
// names, so a bucket never hides a policy that could match: every other
// set goes to the wildcard buckets, which are always searched.
type resIndex struct {
	keyIdx, subIdx   int // resource indexes, -1 when the service-def lacks them
	keyFold, subFold bool
	byKey            map[string]*subBuckets
	anyKey           subBuckets
	noKey            []int32 // sets without the first resource: only requests without it can match them
	all              []int32
}

type subBuckets struct {
	bySub  map[string][]int32
	anySub []int32
}

func newResIndex(v *resView, keyIdx, subIdx int) *resIndex {
	ix := &resIndex{keyIdx: -1, subIdx: -1, byKey: map[string]*subBuckets{}}
	if v == nil {
		return ix
	}
	if d := v.byIdx[keyIdx]; d != nil {
		ix.keyIdx, ix.keyFold = keyIdx, d.opts.ignoreCase
		if s := v.byIdx[subIdx]; s != nil {
			ix.subIdx, ix.subFold = subIdx, s.opts.ignoreCase
		}
	}
	return ix
}

func appendOnce(list []int32, ord int32) []int32 {
	if n := len(list); n > 0 && list[n-1] == ord {
		return list
	}
	return append(list, ord)
}

func (ix *resIndex) add(ord int32, pm *policyResMatcher) {
	ix.all = appendOnce(ix.all, ord)
	if ix.keyIdx < 0 {
		return
	}
	em := pm.elems[ix.keyIdx]
	if em == nil || !pm.ok {
		ix.noKey = appendOnce(ix.noKey, ord)
		return
	}
	var buckets []*subBuckets
	if keys, ok := em.literalKeys(); ok {
		for _, k := range keys {
			b := ix.byKey[k]
			if b == nil {
				b = &subBuckets{bySub: map[string][]int32{}}
				ix.byKey[k] = b
			}
			buckets = append(buckets, b)
		}
	} else {
		buckets = append(buckets, &ix.anyKey)
	}
	var sub *elemMatcher
	if ix.subIdx >= 0 {
		sub = pm.elems[ix.subIdx]
	}
	subKeys, subLiteral := []string(nil), false
	if sub != nil {
		subKeys, subLiteral = sub.literalKeys()
	}
	for _, b := range buckets {
		if !subLiteral {
			b.anySub = appendOnce(b.anySub, ord)
			continue
		}
		if b.bySub == nil {
			b.bySub = map[string][]int32{}
		}
		for _, k := range subKeys {
			b.bySub[k] = appendOnce(b.bySub[k], ord)
		}
	}
}

// candidates returns, in evaluation order, the ordinals of the policies
// that may match r.
func (ix *resIndex) candidates(r *reqResource) []int32 {
	if ix.keyIdx < 0 || !r.has(ix.keyIdx) || r.foreign || (r.multi != nil && r.multi[ix.keyIdx] != nil) {
		return ix.all
	}
	key := r.vals[ix.keyIdx]
	if ix.keyFold {
		key = r.folded[ix.keyIdx]
	}
	useSub := ix.subIdx >= 0 && r.has(ix.subIdx) && (r.multi == nil || r.multi[ix.subIdx] == nil)
	subKey := ""
	if useSub {
		subKey = r.vals[ix.subIdx]
		if ix.subFold {
			subKey = r.folded[ix.subIdx]
		}
	}
	var lists [][]int32
	collect := func(b *subBuckets) {
		if b == nil {
			return
		}
		if len(b.anySub) > 0 {
			lists = append(lists, b.anySub)
		}
		if useSub {
			if l := b.bySub[subKey]; len(l) > 0 {
				lists = append(lists, l)
			}
			return
		}
		for _, l := range b.bySub {
			lists = append(lists, l)
		}
	}
	collect(ix.byKey[key])
	collect(&ix.anyKey)
	switch len(lists) {
	case 0:
		return nil
	case 1:
		return lists[0]
	}
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	out := make([]int32, 0, n)
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
