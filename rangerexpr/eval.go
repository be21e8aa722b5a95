package rangerexpr

import (
	"fmt"
	"math"
	"strings"
)

// Evaluation: each node computes its value in an exprEval, which counts
// steps against the budget and holds the environment (USER, TAGS, REQ…).

type exprEval struct {
	env    *Env
	steps  int
	limit  int
	result bool             // ctx.result
	locals map[string]Value // var / let / const of a script
}

// eval evaluates one node within the budget. In condition mode an
// undefined value forgets what it stands for, so it behaves as
// JavaScript's undefined (USER.x == 'a' is false when x is absent)
// instead of denying as it does in a row filter or mask.
func (ev *exprEval) eval(n exprNode) (Value, error) {
	ev.steps++
	if ev.steps > ev.limit {
		return Value{}, ErrBudget
	}
	v, err := n.eval(ev)
	if err == nil && ev.env.Request != nil && v.kind == jsUndef {
		v.missing = ""
	}
	return v, err
}

type litNode struct{ v Value }
type varNode string
type memberNode struct {
	obj  exprNode
	name string
}
type indexNode struct{ obj, idx exprNode }
type callNode struct {
	obj    exprNode
	method string
	args   []exprNode
}
type notNode struct{ x exprNode }
type negNode struct{ x exprNode }
type binNode struct {
	op   string
	l, r exprNode
}
type condNode struct{ c, t, f exprNode }
type arrNode struct{ elems []exprNode }

func (n litNode) eval(*exprEval) (Value, error) { return n.v, nil }

func (n varNode) eval(ev *exprEval) (Value, error) {
	env := ev.env
	switch n {
	case "USER":
		return env.userObj(), nil
	case "UGNAMES":
		return Value{kind: jsArr, arr: env.Groups}, nil
	case "URNAMES":
		return Value{kind: jsArr, arr: env.Roles}, nil
	case "UG":
		return env.ugObj(), nil
	case "UGA":
		return env.ugaObj(), nil
	case "ctx":
		return Value{kind: jsCtx}, nil
	case "TAGS":
		return env.tagsObj(), nil
	case "TAGNAMES":
		return Value{kind: jsArr, arr: env.tagNames()}, nil
	case "TAG", "tagAttr":
		if env.Tag == nil {
			return Value{}, env.noCurrentTag(string(n))
		}
		if n == "tagAttr" {
			return strMapObj(env.Tag.Attributes, func(k string) string {
				return fmt.Sprintf("attribute %q of tag %s", k, env.Tag.Type)
			}), nil
		}
		return env.tagObj(*env.Tag), nil
	case "REQ":
		return env.reqObj(), nil
	case "RES":
		return env.resObj(), nil
	}
	return Value{}, fmt.Errorf("%s is not supported", string(n))
}

// userObj is USER: the user's attributes plus _name.
func (env *Env) userObj() Value {
	return strMapObj(env.Attrs, func(k string) string { return fmt.Sprintf("attribute %q of user %q", k, env.User) })
}

// ugObj is UG: {group: {attr: value, _name: group}}.
func (env *Env) ugObj() Value {
	obj := map[string]Value{}
	for g, attrs := range env.GroupAttrs {
		obj[g] = strMapObj(attrs, func(k string) string { return fmt.Sprintf("attribute %q of group %q", k, g) })
	}
	return Value{kind: jsObj, obj: obj, missingKey: func(k string) string { return fmt.Sprintf("group %q of user %q", k, env.User) }}
}

// ugaObj is UGA (RangerRequestScriptEvaluator.UserGroupsAttributes): over
// the sorted groups, sVal holds each attribute's first value, mVal all
// its values.
func (env *Env) ugaObj() Value {
	sVal, mVal := map[string]Value{}, map[string]Value{}
	for _, g := range env.Groups {
		for _, k := range sortedKeys(env.GroupAttrs[g]) {
			v := env.GroupAttrs[g][k]
			if _, ok := sVal[k]; !ok {
				sVal[k] = jsString(v)
			}
			cur := mVal[k]
			mVal[k] = Value{kind: jsArr, arr: append(cur.arr, v)}
		}
	}
	miss := func(k string) string { return fmt.Sprintf("group attribute %q of user %q", k, env.User) }
	return Value{kind: jsObj, obj: map[string]Value{
		"sVal": {kind: jsObj, obj: sVal, missingKey: miss},
		"mVal": {kind: jsObj, obj: mVal, missingKey: miss},
	}}
}

// noCurrentTag is the error for TAG in an expression that no tag policy
// holds. Ranger gives an empty object there, so TAG.x is "" and TAG is
// truthy; a filter built on that is not what its author meant.
func (env *Env) noCurrentTag(name string) error {
	return fmt.Errorf("%s is undefined: the expression belongs to a resource policy, not a tag policy, so there is no current tag (use TAGS, HAS_TAG or GET_TAG_ATTR for the tags of the %s)", name, env.What)
}

// tagObj is one tag as Ranger's script sees it: its attributes plus
// _type and _matchType.
func (env *Env) tagObj(t Tag) Value {
	obj := strMapObj(t.Attributes, func(k string) string { return fmt.Sprintf("attribute %q of tag %s", k, t.Type) })
	obj.obj["_type"] = jsString(t.Type)
	obj.obj["_matchType"] = jsString(t.MatchType)
	return obj
}

// tagsObj is TAGS: {type: tag}. Of several tags of one type the first in
// stored order is used (Ranger keeps one of them, in no defined order).
func (env *Env) tagsObj() Value {
	obj := map[string]Value{}
	for _, t := range env.Tags {
		if _, ok := obj[t.Type]; !ok {
			obj[t.Type] = env.tagObj(t)
		}
	}
	return Value{kind: jsObj, obj: obj, missingKey: func(k string) string { return fmt.Sprintf("tag %q of the %s", k, env.What) }}
}

// tagNames is TAGNAMES: the tag types, sorted and unique.
func (env *Env) tagNames() []string {
	names := make([]string, 0, len(env.Tags))
	for _, t := range env.Tags {
		names = append(names, t.Type)
	}
	return sortedUnique(names)
}

// firstTag is the first tag of a type in stored order.
func (env *Env) firstTag(typ string) *Tag {
	for i := range env.Tags {
		if env.Tags[i].Type == typ {
			return &env.Tags[i]
		}
	}
	return nil
}

// resObj is RES (REQ.resource): database, table, column and _ownerUser.
func (env *Env) resObj() Value {
	return strMapObj(env.Resource, func(k string) string {
		if k == "column" {
			return fmt.Sprintf("resource element column of the %s (a row filter is evaluated for a table, not a column)", env.What)
		}
		return fmt.Sprintf("resource element %q of the %s", k, env.What)
	})
}

// reqObj is REQ: the fields of Ranger's request that are the same for
// every execution of a cached rewrite. The others deny (reqUnavailable).
func (env *Env) reqObj() Value {
	accessType := "select"
	if env.Request != nil {
		accessType = env.Request.AccessType
	}
	obj := Value{kind: jsObj, obj: map[string]Value{
		"accessType":            jsString(accessType),
		"user":                  jsString(env.User),
		"userGroups":            {kind: jsArr, arr: env.Groups},
		"userRoles":             {kind: jsArr, arr: env.Roles},
		"userAttributes":        env.userObj(),
		"userGroupAttributes":   env.ugObj(),
		"uga":                   env.ugaObj(),
		"resource":              env.resObj(),
		"resourceMatchingScope": jsString("SELF"),
	}, missingKey: func(k string) string { return fmt.Sprintf("request field %q", k) },
		deniedKey: func(k string) error {
			if why, ok := reqUnavailable[k]; ok {
				return fmt.Errorf("REQ.%s is not available: %s", k, why)
			}
			return nil
		}}
	if rq := env.Request; rq != nil {
		// A condition is evaluated per request, never cached: the
		// client's address, the time and the context are known.
		obj.deniedKey = nil
		obj.obj["clientIPAddress"] = jsString(rq.ClientIP)
		obj.obj["remoteIPAddress"] = jsString(rq.ClientIP)
		obj.obj["accessTime"] = jsNumber(float64(rq.AccessTime.UnixMilli()))
		obj.obj["action"] = jsString(rq.Action)
		obj.obj["sessionId"] = jsString(rq.SessionID)
		obj.obj["context"] = strMapObj(rq.Context, func(k string) string { return fmt.Sprintf("context attribute %q", k) })
	}
	return obj
}

// strMapObj makes an object of string values; missing names what an
// absent key stands for.
func strMapObj(m map[string]string, missing func(string) string) Value {
	obj := make(map[string]Value, len(m))
	for k, v := range m {
		obj[k] = jsString(v)
	}
	return Value{kind: jsObj, obj: obj, missingKey: missing}
}

func property(v Value, key string) (Value, error) {
	switch v.kind {
	case jsObj:
		if p, ok := v.obj[key]; ok {
			return p, nil
		}
		if v.deniedKey != nil {
			if err := v.deniedKey(key); err != nil {
				return Value{}, err
			}
		}
		what := fmt.Sprintf("property %q", key)
		if v.missingKey != nil {
			what = v.missingKey(key)
		}
		return missingVal(what), nil
	case jsStr:
		if key == "length" {
			return jsNumber(float64(len(utf16Units(v.s)))), nil
		}
	case jsArr:
		if key == "length" {
			return jsNumber(float64(len(v.arr))), nil
		}
	case jsUndef:
		return Value{}, fmt.Errorf("cannot read %q: %v", key, v.errUndefined())
	case jsNull:
		return Value{}, fmt.Errorf("cannot read %q of null", key)
	case jsCtx:
		return Value{}, fmt.Errorf("ctx.%s can only be called", key)
	}
	return missingVal(fmt.Sprintf("property %q", key)), nil
}

func utf16Units(s string) []rune {
	var out []rune
	for _, r := range s {
		if r >= 0x10000 {
			out = append(out, 0xD800, 0xDC00) // two units; the values are not used
		} else {
			out = append(out, r)
		}
	}
	return out
}

func (n memberNode) eval(ev *exprEval) (Value, error) {
	if v, ok := n.obj.(varNode); ok && v == "USER" {
		// USER.x without building the USER object (the common case).
		ev.steps++
		if a, ok := ev.env.Attrs[n.name]; ok {
			return jsString(a), nil
		}
		return missingVal(fmt.Sprintf("attribute %q of user %q", n.name, ev.env.User)), nil
	}
	obj, err := ev.eval(n.obj)
	if err != nil {
		return Value{}, err
	}
	if obj.kind == jsCtx && n.name == "result" && ev.env.Request != nil {
		return jsBoolean(ev.result), nil // a script may read what it set
	}
	return property(obj, n.name)
}

func (n indexNode) eval(ev *exprEval) (Value, error) {
	obj, err := ev.eval(n.obj)
	if err != nil {
		return Value{}, err
	}
	idx, err := ev.eval(n.idx)
	if err != nil {
		return Value{}, err
	}
	if obj.kind == jsArr && idx.kind == jsNum {
		i := int(idx.n)
		if float64(i) != idx.n || i < 0 || i >= len(obj.arr) {
			return missingVal(fmt.Sprintf("list element %s", formatNum(idx.n))), nil
		}
		return jsString(obj.arr[i]), nil
	}
	key, err := idx.str()
	if err != nil {
		return Value{}, err
	}
	return property(obj, key)
}

func (n notNode) eval(ev *exprEval) (Value, error) {
	x, err := ev.eval(n.x)
	if err != nil {
		return Value{}, err
	}
	return jsBoolean(!x.truthy()), nil // !USER.x tests for a missing attribute
}

func (n negNode) eval(ev *exprEval) (Value, error) {
	x, err := ev.eval(n.x)
	if err != nil {
		return Value{}, err
	}
	f, err := x.num()
	if err != nil {
		return Value{}, err
	}
	return jsNumber(-f), nil
}

func (n condNode) eval(ev *exprEval) (Value, error) {
	c, err := ev.eval(n.c)
	if err != nil {
		return Value{}, err
	}
	if c.truthy() {
		return ev.eval(n.t)
	}
	return ev.eval(n.f)
}

func (n arrNode) eval(ev *exprEval) (Value, error) {
	out := Value{kind: jsArr, arr: []string{}}
	for _, e := range n.elems {
		v, err := ev.eval(e)
		if err != nil {
			return Value{}, err
		}
		s, err := v.str()
		if err != nil {
			return Value{}, err
		}
		out.arr = append(out.arr, s)
	}
	return out, nil
}

func (n binNode) eval(ev *exprEval) (Value, error) {
	l, err := ev.eval(n.l)
	if err != nil {
		return Value{}, err
	}
	switch n.op {
	case "&&", "||":
		// JavaScript returns an operand, not a boolean: USER.x || 'none'.
		// A missing attribute used as a test is not an error.
		if (n.op == "&&") != l.truthy() {
			return l, nil
		}
		return ev.eval(n.r)
	}
	r, err := ev.eval(n.r)
	if err != nil {
		return Value{}, err
	}
	switch n.op {
	case "==", "!=", "===", "!==":
		eq, err := jsEquals(l, r, len(n.op) == 3)
		if err != nil {
			return Value{}, err
		}
		return jsBoolean(eq == (n.op[0] == '=')), nil
	case "+":
		if l.kind == jsStr || r.kind == jsStr || l.kind == jsArr || r.kind == jsArr {
			ls, err := l.str()
			if err != nil {
				return Value{}, err
			}
			rs, err := r.str()
			if err != nil {
				return Value{}, err
			}
			if len(ls)+len(rs) > maxStringLen {
				return Value{}, ErrBudget // no value grows without bound
			}
			return jsString(ls + rs), nil
		}
		a, err := l.num()
		if err != nil {
			return Value{}, err
		}
		b, err := r.num()
		if err != nil {
			return Value{}, err
		}
		return jsNumber(a + b), nil
	case "-", "*", "/", "%":
		a, err := l.num()
		if err != nil {
			return Value{}, err
		}
		b, err := r.num()
		if err != nil {
			return Value{}, err
		}
		switch n.op {
		case "-":
			return jsNumber(a - b), nil
		case "*":
			return jsNumber(a * b), nil
		case "/":
			return jsNumber(a / b), nil
		}
		return jsNumber(math.Mod(a, b)), nil
	}
	// < > <= >=: strings compare as strings, anything else as numbers.
	var cmp int
	if l.kind == jsStr && r.kind == jsStr {
		cmp = strings.Compare(l.s, r.s)
	} else {
		a, err := l.num()
		if err != nil {
			return Value{}, err
		}
		b, err := r.num()
		if err != nil {
			return Value{}, err
		}
		if math.IsNaN(a) || math.IsNaN(b) {
			return jsFalse, nil
		}
		switch {
		case a < b:
			cmp = -1
		case a > b:
			cmp = 1
		}
	}
	switch n.op {
	case "<":
		return jsBoolean(cmp < 0), nil
	case ">":
		return jsBoolean(cmp > 0), nil
	case "<=":
		return jsBoolean(cmp <= 0), nil
	}
	return jsBoolean(cmp >= 0), nil
}

// jsEquals is == (loose) or === (strict). A missing attribute compares
// only with null and undefined; compared with anything else it denies
// rather than quietly being unequal.
func jsEquals(a, b Value, strict bool) (bool, error) {
	nullish := func(v Value) bool { return v.kind == jsUndef || v.kind == jsNull }
	for _, v := range []Value{a, b} {
		if v.kind == jsUndef && v.missing != "" && !nullish(a) != !nullish(b) {
			return false, v.errUndefined()
		}
	}
	if nullish(a) || nullish(b) {
		if strict {
			return a.kind == b.kind, nil
		}
		return nullish(a) && nullish(b), nil
	}
	if a.kind == b.kind {
		switch a.kind {
		case jsBool:
			return a.b == b.b, nil
		case jsNum:
			return a.n == b.n, nil
		case jsStr:
			return a.s == b.s, nil
		}
		return false, nil // two objects or lists: never the same one
	}
	if strict {
		return false, nil
	}
	if a.kind == jsObj || b.kind == jsObj || a.kind == jsCtx || b.kind == jsCtx {
		return false, nil
	}
	if a.kind == jsArr || b.kind == jsArr {
		as, _ := a.str()
		bs, _ := b.str()
		if a.kind == jsNum || b.kind == jsNum || a.kind == jsBool || b.kind == jsBool {
			an, _ := a.num()
			bn, _ := b.num()
			return an == bn, nil
		}
		return as == bs, nil
	}
	an, err := a.num()
	if err != nil {
		return false, err
	}
	bn, err := b.num()
	if err != nil {
		return false, err
	}
	return an == bn, nil
}

func (n callNode) eval(ev *exprEval) (Value, error) {
	obj, err := ev.eval(n.obj)
	if err != nil {
		return Value{}, err
	}
	args := make([]Value, len(n.args))
	for i, a := range n.args {
		if args[i], err = ev.eval(a); err != nil {
			return Value{}, err
		}
	}
	switch obj.kind {
	case jsCtx:
		return ev.callFunc(n.method, args)
	case jsStr:
		return strMethod(obj.s, n.method, args)
	case jsArr:
		return arrMethod(obj.arr, n.method, args)
	case jsUndef:
		return Value{}, fmt.Errorf("cannot call %s: %v", n.method, obj.errUndefined())
	}
	return Value{}, fmt.Errorf("method %s is not supported", n.method)
}
