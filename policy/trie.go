package policy

import (
	"strings"

	"github.com/pgranger/pgranger/ranger"
)

// Ranger does not walk every access policy for a request: it walks the
// policies its resource tries return (RangerPolicyRepository.
// getLikelyMatchPolicyEvaluators over one RangerResourceTrie per resource
// of the service-def), and a policy it walks can end the walk without
// matching: an allowed result is final once a policy without deny items
// has been looked at. So which policies the tries return is part of the
// decision (which policy reports an allowed `_any`, for one), and
// pgranger's own index (index.go), which returns more, is narrowed to
// exactly them with trieKeys.

// trieKey is how a trie holds one resource of a policy resource set.
type trieKey struct {
	// always: the trie returns the set for every value of the resource:
	// isExcludes and match-any values (RangerResourceTrie's inherited and
	// root wildcard evaluators), and a set without the resource whose
	// leaf is an ancestor of it (a database-only policy for a table).
	always bool
	// never: a set without the resource whose leaf is not an ancestor of
	// it (a url policy for a database): the trie does not hold it.
	never bool
	fold  bool
	vals  []trieVal
}

// trieVal is one value as the trie inserts it: under its part before the
// first wildcard or token character, as a wildcard evaluator (returned for
// every value the part is a prefix of) when the value had such a
// character or is recursive, else only for that exact value.
type trieVal struct {
	prefix string
	wild   bool
}

// newTrieKeys builds, for every resource of the view, how its trie holds
// the policy resource set res.
func newTrieKeys(sd *serviceDef, view *resView, res map[string]ranger.RangerPolicyResource) []*trieKey {
	if view == nil {
		return nil
	}
	keys := make([]*trieKey, len(sd.names))
	leaf := trieLeaf(sd, view, res)
	for i, def := range view.byIdx {
		pr, ok := res[def.name]
		if !ok {
			keys[i] = &trieKey{always: leaf != nil && trieAncestor(view, leaf, def), never: leaf == nil || !trieAncestor(view, leaf, def)}
			continue
		}
		k := &trieKey{fold: def.opts.ignoreCase}
		keys[i] = k
		if pr.IsExcludes || newElemMatcher(def, pr).matchAny {
			k.always = true
			continue
		}
		special := trieSpecialChars(&def.opts)
		for _, v := range pr.Values {
			if v == "" {
				continue
			}
			p := v
			if n := strings.IndexAny(v, special); n >= 0 {
				p = v[:n]
			}
			if k.fold {
				p = fold(p)
			}
			k.vals = append(k.vals, trieVal{prefix: p, wild: len(p) != len(v) || pr.IsRecursive})
		}
	}
	return keys
}

// trieSpecialChars are the characters a trie does not index past
// (RangerResourceTrie.wildcardChars): the wildcards where they are on,
// the token delimiters where tokens are replaced, and the start of a
// ${{…}} expression where those are.
func trieSpecialChars(o *matchOpts) string {
	s := ""
	if o.wildCard {
		s += "*?"
	}
	if o.replaceTokens {
		s += string(o.tokStart) + string(o.tokEnd) + string(o.tokEscape)
	}
	if o.replaceExpr {
		s += "$"
	}
	return s
}

// trieLeaf is ServiceDefUtil.getLeafResourceDef: the resource of the set
// with the highest level among those with a non-blank value.
func trieLeaf(sd *serviceDef, view *resView, res map[string]ranger.RangerPolicyResource) *resDef {
	var leaf *resDef
	for name, pr := range res {
		i := sd.idxOf(name)
		if i < 0 || view.byIdx[i] == nil {
			continue
		}
		blank := true
		for _, v := range pr.Values {
			if strings.TrimSpace(v) != "" {
				blank = false
				break
			}
		}
		if blank {
			continue
		}
		if d := view.byIdx[i]; leaf == nil || leaf.level < d.level {
			leaf = d
		}
	}
	return leaf
}

// trieAncestor is ServiceDefUtil.isAncestorOf: some resource on the path
// from d up to its root has ancestor as its parent.
func trieAncestor(view *resView, ancestor, d *resDef) bool {
	byName := map[string]*resDef{}
	for _, x := range view.byIdx {
		byName[x.name] = x
	}
	for n, steps := d, 0; n != nil && steps <= len(view.byIdx); n, steps = byName[n.parent], steps+1 {
		if strings.EqualFold(n.parent, ancestor.name) {
			return true
		}
	}
	return false
}

// candidate reports whether Ranger's tries return the set for r: for
// every resource the request names, the trie of that resource holds the
// set for one of the request's values (RangerResourceEvaluatorsRetriever
// intersects the tries' answers). A request naming no resource walks
// every policy.
func (pm *policyResMatcher) trieCandidate(r *reqResource) bool {
	if pm.trie == nil || r.nkeys == 0 {
		return true
	}
	for i, k := range pm.trie {
		if k == nil || !r.has(i) {
			continue
		}
		if k.never {
			return false
		}
		if k.always {
			continue
		}
		vals := []string{r.vals[i]}
		if r.multi != nil && r.multi[i] != nil {
			vals = r.multi[i]
		}
		found := false
		for _, v := range vals {
			if k.fold {
				v = fold(v)
			}
			for _, tv := range k.vals {
				if tv.wild && strings.HasPrefix(v, tv.prefix) || !tv.wild && v == tv.prefix {
					found = true
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// trieCandidate: one of the policy's resource sets is a candidate.
func (p *cpolicy) trieCandidate(r *reqResource) bool {
	if r.foreign {
		return true
	}
	for _, pm := range p.resources {
		if pm.trieCandidate(r) {
			return true
		}
	}
	return len(p.resources) == 0
}
