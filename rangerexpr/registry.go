package rangerexpr

import (
	"fmt"
	"regexp"
	"strconv"
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
	register(true, accessTime, "isAccessTimeAfter", "isAccessTimeBefore", "isAccessTimeBetween")
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

// accessTime is ctx.isAccessTimeAfter(from[, tz]), isAccessTimeBefore(to[,
// tz]) and isAccessTimeBetween(from, to[, tz]): RangerTimeRangeChecker.
// A time is "yyyy/MM/dd HH:mm:ss", "yyyy/MM/dd HH:mm" or "yyyy/MM/dd"
// (what follows is ignored, as SimpleDateFormat does), a wall-clock time
// in tz — in UTC when tz is blank (Ranger: the plugin JVM's default zone).
// A blank or unreadable time is Ranger's -1: after it is always true,
// before it always false.
func accessTime(ev *exprEval, method string, args []Value) (Value, error) {
	n := 1
	if method == "isAccessTimeBetween" {
		n = 2
	}
	if len(args) < n || len(args) > n+1 {
		return Value{}, fmt.Errorf("ctx.%s takes %d or %d arguments", method, n, n+1)
	}
	strs := make([]string, len(args))
	for i, a := range args {
		if a.kind == jsNull || a.kind == jsUndef {
			continue
		}
		s, err := a.str()
		if err != nil {
			return Value{}, err
		}
		strs[i] = s
	}
	loc := time.UTC
	if len(args) == n+1 && strings.TrimSpace(strs[n]) != "" {
		if tz := ev.env.Request.TimeZone; tz != nil {
			loc = tz(strs[n])
		} else if l, err := time.LoadLocation(strs[n]); err == nil {
			loc = l
		}
	}
	from, to := int64(-1), int64(-1)
	switch method {
	case "isAccessTimeAfter":
		from = rangeTime(strs[0], loc)
	case "isAccessTimeBefore":
		to = rangeTime(strs[0], loc)
	default:
		from, to = rangeTime(strs[0], loc), rangeTime(strs[1], loc)
	}
	at := ev.env.Request.AccessTime.UnixMilli()
	switch {
	case to < 0:
		return jsBoolean(at > from), nil
	case from < 0:
		return jsBoolean(at < to), nil
	}
	return jsBoolean(at >= from && at < to), nil
}

// rangeTime reads a time of RangerTimeRangeChecker as epoch milliseconds,
// -1 when blank or unreadable.
func rangeTime(s string, loc *time.Location) int64 {
	if strings.TrimSpace(s) == "" {
		return -1
	}
	m := rangeTimeRe.FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	num := func(i int) int {
		if m[i] == "" {
			return 0
		}
		v, _ := strconv.Atoi(m[i])
		return v
	}
	// SimpleDateFormat is lenient: time.Date normalises out-of-range
	// fields the same way (month 13 is January of the next year).
	t := time.Date(num(1), time.Month(num(2)), num(3), num(4), num(5), num(6), 0, loc)
	return t.UnixMilli()
}

var rangeTimeRe = regexp.MustCompile(`^(\d{1,9})/(\d{1,9})/(\d{1,9})(?: (\d{1,9}):(\d{1,9})(?::(\d{1,9}))?)?`)
