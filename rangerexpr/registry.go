package rangerexpr

import (
	"fmt"
	"strings"
	"time"
)

// funcDef is one ctx method. request marks the methods that read the
// access request (its time, client, context): they exist only where a
// condition is evaluated for one request (Env.Request), never in a row
// filter or mask, whose rewrite is cached.
type funcDef struct {
	request bool
	fn      func(ev *exprEval, method string, args []Value) (Value, error)
}

// funcs is the function table: Ranger's ctx methods
// (RangerRequestScriptEvaluator) that pgranger implements. A method not
// listed is an error, so the caller denies.
var funcs = map[string]funcDef{}

func register(request bool, fn func(ev *exprEval, method string, args []Value) (Value, error), names ...string) {
	for _, n := range names {
		if _, dup := funcs[n]; dup {
			panic("rangerexpr: " + n + " registered twice")
		}
		funcs[n] = funcDef{request: request, fn: fn}
	}
}

func init() {
	static := func(ev *exprEval, m string, a []Value) (Value, error) { return ev.ctxCall(m, a) }
	register(false, static, "getUser", "isInGroup", "isInRole", "isInAnyGroup", "isInAnyRole",
		"hasUserAttr", "hasUgAttr", "userAttr", "userAttrQ", "hasTag", "hasAnyTag", "hasTagAttr",
		"getCurrentTagType", "getAttributeValue")
	for _, base := range []string{"ugAttr", "tagAttr"} {
		register(false, static, base+"Q", base+"Csv", base+"CsvQ")
	}
	for _, base := range []string{"ugNames", "urNames", "userAttrNames", "ugAttrNames", "tagNames", "tagAttrNames"} {
		register(false, static, base, base+"Q", base+"Csv", base+"CsvQ")
	}
	funcs["ugAttr"] = funcDef{fn: static}
	funcs["tagAttr"] = funcDef{fn: static}

	register(true, accessed, "isAccessedBefore", "isAccessedAfter")
	register(true, func(ev *exprEval, _ string, _ []Value) (Value, error) {
		return jsString(ev.env.Request.ClientIP), nil
	}, "getClientIPAddress")
	register(true, func(ev *exprEval, _ string, _ []Value) (Value, error) {
		return jsString(ev.env.Request.Action), nil
	}, "getAction")
	register(true, func(ev *exprEval, _ string, _ []Value) (Value, error) {
		return jsString(ev.env.Request.SessionID), nil
	}, "getSessionId")
	register(true, func(ev *exprEval, _ string, _ []Value) (Value, error) {
		return jsBoolean(ev.env.Request.AccessType == "" || ev.env.Request.AccessType == "_any"), nil
	}, "isAccessTypeAny")
	register(true, func(ev *exprEval, m string, a []Value) (Value, error) {
		name, err := argStr(a, 0, m)
		if err != nil {
			return Value{}, err
		}
		if v, ok := ev.env.Request.Context[name]; ok && strings.TrimSpace(name) != "" {
			return jsString(v), nil
		}
		return Value{kind: jsNull}, nil // Ranger returns null
	}, "getRequestContextAttribute")
	register(false, func(ev *exprEval, _ string, _ []Value) (Value, error) {
		return Value{kind: jsArr, arr: ev.env.Groups}, nil
	}, "getUserGroups")
	register(false, func(ev *exprEval, _ string, _ []Value) (Value, error) {
		return Value{kind: jsArr, arr: ev.env.Roles}, nil
	}, "getUserRoles")
}

func (ev *exprEval) callFunc(method string, args []Value) (Value, error) {
	f, ok := funcs[method]
	if !ok {
		return Value{}, fmt.Errorf("ctx.%s is not supported", method)
	}
	if f.request && ev.env.Request == nil {
		return Value{}, fmt.Errorf("ctx.%s is not supported in row filters and masks (a rewrite is cached, so it cannot depend on the request's time, client or context)", method)
	}
	return f.fn(ev, method, args)
}

// accessed is ctx.isAccessedBefore / isAccessedAfter: the access time
// against a date in a tag attribute — (attr) of the current tag, (type,
// attr) of the first tag of that type with attributes.
func accessed(ev *exprEval, method string, args []Value) (Value, error) {
	env := ev.env
	var val string
	switch len(args) {
	case 1:
		name, err := args[0].str()
		if err != nil {
			return Value{}, err
		}
		if env.Tag != nil {
			val = env.Tag.Attributes[name]
		}
	case 2:
		typ, err := args[0].str()
		if err != nil {
			return Value{}, err
		}
		name, err := args[1].str()
		if err != nil {
			return Value{}, err
		}
		for _, t := range env.Tags {
			if t.Type == typ && len(t.Attributes) > 0 {
				val = t.Attributes[name]
				break
			}
		}
	default:
		return Value{}, fmt.Errorf("ctx.%s takes one or two arguments", method)
	}
	at := env.Request.AccessTime
	expiry, ok := ParseTagDate(val)
	if method == "isAccessedAfter" {
		return jsBoolean(!ok || !at.Before(expiry)), nil // no date counts as after
	}
	return jsBoolean(ok && !at.After(expiry)), nil
}

// ParseTagDate reads a tag attribute date the way RangerRequestScriptEvaluator
// does: "yyyy/MM/dd" or Atlas's "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", each
// matched from the start of the text (SimpleDateFormat ignores what
// follows), read as a UTC wall-clock time.
func ParseTagDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, ok := parseSlashDate(s); ok {
		return t, true
	}
	if len(s) >= 24 {
		if t, err := time.Parse("2006-01-02T15:04:05.000Z", s[:24]); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func parseSlashDate(s string) (time.Time, bool) {
	nums := [3]int{}
	pos := 0
	for field := 0; field < 3; field++ {
		start := pos
		for pos < len(s) && s[pos] >= '0' && s[pos] <= '9' {
			nums[field] = nums[field]*10 + int(s[pos]-'0')
			pos++
			if pos-start > 9 {
				return time.Time{}, false
			}
		}
		if pos == start {
			return time.Time{}, false
		}
		if field < 2 {
			if pos >= len(s) || s[pos] != '/' {
				return time.Time{}, false
			}
			pos++
		}
	}
	y, m, d := nums[0], nums[1], nums[2]
	if m < 1 || m > 12 || d < 1 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d { // non-lenient: 2024/02/30 is rejected
		return time.Time{}, false
	}
	return t, true
}
