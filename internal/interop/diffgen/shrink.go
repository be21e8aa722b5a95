package diffgen

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/pgranger/pgranger/internal/interop"
)

// mapKeys are the JSON members whose values are maps (a member of them
// may go) rather than records (whose members are fields).
var mapKeys = map[string]bool{
	"serviceConfig": true, "userAttrMapping": true, "groupAttrMapping": true, "attributes": true,
	"resourceToTagIds": true, "tags": true, "tagDefinitions": true, "resources": true, "resourceElements": true,
}

// flags are booleans and numbers a smaller case sets to false or 0.
var flags = map[string]bool{"isDenyAllElse": true, "isExcludes": true, "isRecursive": true, "policyPriority": true,
	"selfOrDescendants": true}

// nonEmpty are lists a smaller case keeps one element of: a resource
// without values and an item without accesses are other cases, not
// smaller ones.
var nonEmpty = map[string]bool{"values": true, "accesses": true}

// untouched are subtrees the shrinker leaves alone: a service-def is not
// the case, it is the vocabulary.
var untouched = map[string]bool{"serviceDef": true}

// Shrink cuts a mismatch down: it removes list elements, map members,
// group memberships and owners, clears flags, and keeps each change after
// which both engines still disagree on the same fields, until no change
// is kept. The oracle is reloaded for every attempt.
func Shrink(ctx context.Context, oracle *interop.Ranger, m Mismatch) (Mismatch, error) {
	fields := diffFields(m.Diff)
	tree, err := toTree(caseDoc{Bundle: DocOf(m.Bundle), Request: m.Request})
	if err != nil {
		return m, err
	}
	best := m
	try := func(cand any) bool {
		var c caseDoc
		data, err := json.Marshal(cand)
		if err != nil || json.Unmarshal(data, &c) != nil || c.Bundle.Policies == nil {
			return false
		}
		b, err := c.Bundle.Bundle()
		if err != nil {
			return false
		}
		ms, err := Check(ctx, oracle, nil, b, []Request{c.Request})
		if err != nil || len(ms) != 1 || diffFields(ms[0].Diff) != fields {
			return false
		}
		best = ms[0]
		return true
	}
	for changed := true; changed; {
		changed = false
		for _, cand := range candidates(tree) {
			if try(cand) {
				tree, changed = cand, true
				break
			}
		}
	}
	return best, nil
}

type caseDoc struct {
	Bundle  Doc     `json:"bundle"`
	Request Request `json:"request"`
}

func toTree(v any) (any, error) {
	raw, err := interop.RangerDocument(v)
	if err != nil {
		return nil, err
	}
	var t any
	err = json.Unmarshal(raw, &t)
	return t, err
}

// diffFields is the names of the fields a Diff lists.
func diffFields(d string) string {
	var f []string
	for _, part := range strings.Split(d, "; ") {
		if i := strings.IndexByte(part, ' '); i > 0 {
			f = append(f, part[:i])
		}
	}
	return strings.Join(f, ",")
}

// candidates are the trees one step smaller than t, larger cuts first
// (whole policies before their items).
func candidates(t any) []any {
	var out []any
	var walk func(path []any, v any, key string)
	walk = func(path []any, v any, key string) {
		switch n := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(n))
			for k := range n {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if untouched[k] {
					continue
				}
				if mapKeys[key] {
					out = append(out, edit(t, append(path, k), nil, true))
				}
				switch c := n[k].(type) {
				case bool:
					if c && flags[k] {
						out = append(out, edit(t, append(path, k), false, false))
					}
				case float64:
					if c != 0 && flags[k] {
						out = append(out, edit(t, append(path, k), 0.0, false))
					}
				case string:
					if k == "owner" {
						out = append(out, edit(t, append(path, k), nil, true))
					}
				}
				walk(append(path, k), n[k], k)
			}
		case []any:
			for i := range n {
				if len(n) > 1 || !nonEmpty[key] {
					out = append(out, edit(t, append(path, i), nil, true))
				}
			}
			for i := range n {
				walk(append(path, i), n[i], key)
			}
		}
	}
	walk(nil, t, "")
	return out
}

// edit returns a copy of t with the value at path replaced by v, or
// removed.
func edit(t any, path []any, v any, remove bool) any {
	if len(path) == 0 {
		return v
	}
	switch n := t.(type) {
	case map[string]any:
		k := path[0].(string)
		c := make(map[string]any, len(n))
		for kk, vv := range n {
			c[kk] = vv
		}
		if len(path) == 1 {
			if remove {
				delete(c, k)
			} else {
				c[k] = v
			}
			return c
		}
		c[k] = edit(n[k], path[1:], v, remove)
		return c
	case []any:
		i := path[0].(int)
		if len(path) == 1 && remove {
			c := append([]any{}, n[:i]...)
			return append(c, n[i+1:]...)
		}
		c := append([]any{}, n...)
		if len(path) == 1 {
			c[i] = v
		} else {
			c[i] = edit(n[i], path[1:], v, remove)
		}
		return c
	}
	return t
}

// Regression is m as a regression case: its bundle, request and Ranger's
// answer.
func (m Mismatch) Regression(name, why string) Regression {
	return Regression{Name: name, Why: why, Bundle: DocOf(m.Bundle), Request: m.Request, Ranger: m.RG}
}
