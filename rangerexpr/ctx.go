package rangerexpr

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The ctx object's methods (ctx.getUser(), ctx.getUserAttribute(…),
// …): the functions a condition calls on the access request, dispatched
// through the registry (registry.go).

func (ev *exprEval) ctxCall(method string, args []Value) (Value, error) {
	env := ev.env
	one := func() (string, error) { return argStr(args, 0, method) }
	switch method {
	case "getUser":
		return jsString(env.User), nil
	case "isInGroup", "isInRole":
		x, err := one()
		if err != nil {
			return Value{}, err
		}
		list := env.Groups
		if method == "isInRole" {
			list = env.Roles
		}
		i := sort.SearchStrings(list, x)
		return jsBoolean(i < len(list) && list[i] == x), nil
	case "isInAnyGroup":
		return jsBoolean(len(env.Groups) > 0), nil
	case "isInAnyRole":
		return jsBoolean(len(env.Roles) > 0), nil
	case "hasUserAttr":
		x, err := one()
		if err != nil {
			return Value{}, err
		}
		_, ok := env.Attrs[x]
		return jsBoolean(ok), nil
	case "hasUgAttr":
		x, err := one()
		if err != nil {
			return Value{}, err
		}
		for _, attrs := range env.GroupAttrs {
			if _, ok := attrs[x]; ok {
				return jsTrue, nil
			}
		}
		return jsFalse, nil
	case "userAttr", "userAttrQ":
		x, err := one()
		if err != nil {
			return Value{}, err
		}
		v, ok := env.Attrs[x]
		var vals []string
		if ok {
			vals = []string{v}
		}
		la, err := parseListArgs(args[1:], method == "userAttrQ")
		if err != nil {
			return Value{}, err
		}
		if !ok && !la.hasDef {
			// Ranger gives ""; a filter built on a missing attribute
			// is unusable in pgranger (docs/policy-semantics.md, "`${{…}}` expressions").
			return missingVal(fmt.Sprintf("attribute %q of user %q", x, env.User)), nil
		}
		if method == "userAttr" {
			if !ok {
				v = la.def
			}
			return jsString(v), nil
		}
		return csv(vals, args[1:], true)
	case "ugAttr", "ugAttrQ", "ugAttrCsv", "ugAttrCsvQ":
		x, err := one()
		if err != nil {
			return Value{}, err
		}
		var vals []string
		for _, g := range env.Groups {
			if v, ok := env.GroupAttrs[g][x]; ok {
				vals = append(vals, v)
			}
		}
		return attrList(method, args[1:], vals, fmt.Sprintf("attribute %q of the groups of user %q", x, env.User))
	case "tagAttr", "tagAttrQ", "tagAttrCsv", "tagAttrCsvQ":
		// RangerRequestScriptEvaluator.getTagAttr: the attribute of one
		// tag per type (Ranger keeps one per type; as TAGS, the type's
		// first), in the order of the type names, so two tags of one
		// type give one value.
		x, err := one()
		if err != nil {
			return Value{}, err
		}
		var types []string
		for _, t := range env.Tags {
			if !slices.Contains(types, t.Type) {
				types = append(types, t.Type)
			}
		}
		sort.Strings(types)
		var vals []string
		for _, typ := range types {
			if v, ok := env.firstTag(typ).Attributes[x]; ok {
				vals = append(vals, v)
			}
		}
		return attrList(method, args[1:], vals, fmt.Sprintf("attribute %q of the tags of the %s", x, env.What))
	case "hasTag":
		x, err := one()
		if err != nil {
			return Value{}, err
		}
		return jsBoolean(env.firstTag(x) != nil), nil
	case "hasAnyTag":
		return jsBoolean(len(env.Tags) > 0), nil
	case "hasTagAttr":
		x, err := one()
		if err != nil {
			return Value{}, err
		}
		for _, t := range env.Tags {
			if _, ok := t.Attributes[x]; ok {
				return jsTrue, nil
			}
		}
		return jsFalse, nil
	case "getCurrentTagType":
		if env.Tag == nil {
			return Value{}, env.noCurrentTag("ctx.getCurrentTagType()")
		}
		return jsString(env.Tag.Type), nil
	case "getAttributeValue":
		// (attr): the current tag's attribute; (type, attr): the first
		// tag of that type's.
		switch len(args) {
		case 1:
			x, err := one()
			if err != nil {
				return Value{}, err
			}
			if env.Tag == nil {
				return Value{}, env.noCurrentTag("ctx.getAttributeValue('" + x + "')")
			}
			if v, ok := env.Tag.Attributes[x]; ok {
				return jsString(v), nil
			}
			return missingVal(fmt.Sprintf("attribute %q of tag %s", x, env.Tag.Type)), nil
		case 2:
			typ, err := args[0].str()
			if err != nil {
				return Value{}, err
			}
			x, err := args[1].str()
			if err != nil {
				return Value{}, err
			}
			if t := env.firstTag(typ); t != nil {
				if v, ok := t.Attributes[x]; ok {
					return jsString(v), nil
				}
			}
			return missingVal(fmt.Sprintf("attribute %q of tag %s of the %s", x, typ, env.What)), nil
		}
		return Value{}, fmt.Errorf("ctx.getAttributeValue takes one or two arguments")
	}
	var values []string
	base := strings.TrimSuffix(strings.TrimSuffix(method, "Q"), "Csv")
	switch base {
	case "ugNames":
		values = env.Groups
	case "urNames":
		values = env.Roles
	case "userAttrNames":
		for _, k := range sortedKeys(env.Attrs) {
			if k != "_name" {
				values = append(values, k)
			}
		}
	case "ugAttrNames":
		seen := map[string]bool{}
		for _, attrs := range env.GroupAttrs {
			for k := range attrs {
				if k != "_name" && !seen[k] {
					seen[k] = true
					values = append(values, k)
				}
			}
		}
		sort.Strings(values)
	case "tagNames":
		values = env.tagNames()
	case "tagAttrNames":
		// The union of the tags' attribute names, sorted (_type and
		// _matchType are not attributes).
		var names []string
		for _, t := range env.Tags {
			for k := range t.Attributes {
				if k != "_type" && k != "_matchType" {
					names = append(names, k)
				}
			}
		}
		values = sortedUnique(names)
	default:
		return Value{}, fmt.Errorf("ctx.%s is not supported", method)
	}
	quoted := strings.HasSuffix(method, "Q")
	if strings.Contains(method, "Csv") {
		if len(args) > 0 {
			return Value{}, fmt.Errorf("ctx.%s takes no arguments", method)
		}
		return csv(values, nil, quoted)
	}
	return csv(values, args, quoted)
}

// attrList renders the values of a ctx attribute method (…Attr, …AttrQ,
// …AttrCsv, …AttrCsvQ) with its list arguments (separator, default); the
// Csv forms take none. No value and no default makes the filter unusable,
// as for a user attribute: missing names what was looked up.
func attrList(method string, rest []Value, vals []string, missing string) (Value, error) {
	quoted := strings.HasSuffix(method, "Q")
	if strings.Contains(method, "Csv") {
		rest = nil
	}
	la, err := parseListArgs(rest, quoted)
	if err != nil {
		return Value{}, err
	}
	if len(vals) == 0 && !la.hasDef {
		return missingVal(missing), nil
	}
	return csv(vals, rest, quoted)
}
