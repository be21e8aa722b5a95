package rangerexpr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// JavaScript values as Ranger's expressions see them: strings, numbers,
// booleans, null, undefined, arrays and the objects USER, TAGS, REQ, ….

type jsKind uint8

const (
	jsUndef jsKind = iota
	jsNull
	jsBool
	jsNum
	jsStr
	jsArr
	jsObj
	jsCtx // Ranger's ctx object: only its methods can be used
)

// Value is a JavaScript value of the subset.
type Value struct {
	kind jsKind
	b    bool
	n    float64
	s    string
	arr  []string
	obj  map[string]Value
	// list is set on a string a list function returned (ctx.ugNamesQ(),
	// UG_NAMES_CSV, …): s is Ranger's text, list says how to render it.
	list *listVal
	// missing names what an undefined value stands for ("attribute dept of
	// user bob"): using it anywhere but in a test denies.
	missing string
	// missingKey names what an absent property of an object stands for.
	missingKey func(key string) string
	// deniedKey, when it returns an error, makes reading an absent
	// property of an object an error rather than a missing value: a
	// field Ranger has that pgranger cannot offer (REQ.clientIPAddress).
	deniedKey func(key string) error
}

type listVal struct {
	items  []string
	sep    string
	quoted bool // each item is a string literal ('a','b')
	// open and clos are quotes other than ' around each item ({a},{b}):
	// Ranger's text, which the SQL layer cannot make safe.
	open, clos string
}

var (
	jsUndefined = Value{kind: jsUndef}
	jsTrue      = Value{kind: jsBool, b: true}
	jsFalse     = Value{kind: jsBool}
)

func jsString(s string) Value  { return Value{kind: jsStr, s: s} }
func jsNumber(n float64) Value { return Value{kind: jsNum, n: n} }
func jsBoolean(b bool) Value {
	if b {
		return jsTrue
	}
	return jsFalse
}

func missingVal(what string) Value { return Value{kind: jsUndef, missing: what} }

func (v Value) truthy() bool {
	switch v.kind {
	case jsBool:
		return v.b
	case jsNum:
		return v.n != 0 && !math.IsNaN(v.n)
	case jsStr:
		return v.s != ""
	case jsArr, jsObj, jsCtx:
		return true
	}
	return false
}

func (v Value) errUndefined() error {
	if v.missing != "" {
		return fmt.Errorf("%s is missing", v.missing)
	}
	return fmt.Errorf("the value is undefined")
}

// str is JavaScript's ToString, except that an undefined value (a missing
// attribute) and objects are errors.
func (v Value) str() (string, error) {
	switch v.kind {
	case jsUndef:
		return "", v.errUndefined()
	case jsNull:
		return "null", nil
	case jsBool:
		if v.b {
			return "true", nil
		}
		return "false", nil
	case jsNum:
		return formatNum(v.n), nil
	case jsStr:
		return v.s, nil
	case jsArr:
		return strings.Join(v.arr, ","), nil
	}
	return "", fmt.Errorf("an object has no text value")
}

func formatNum(n float64) string {
	if math.IsNaN(n) {
		return "NaN"
	}
	if math.IsInf(n, 0) {
		if n > 0 {
			return "Infinity"
		}
		return "-Infinity"
	}
	return strconv.FormatFloat(n, 'f', -1, 64)
}

// num is JavaScript's ToNumber for the kinds that have one.
func (v Value) num() (float64, error) {
	switch v.kind {
	case jsUndef:
		if v.missing != "" {
			return 0, v.errUndefined()
		}
		return math.NaN(), nil
	case jsNull:
		return 0, nil
	case jsBool:
		if v.b {
			return 1, nil
		}
		return 0, nil
	case jsNum:
		return v.n, nil
	case jsStr:
		s := strings.TrimSpace(v.s)
		if s == "" {
			return 0, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN(), nil
		}
		return f, nil
	case jsArr:
		return jsString(strings.Join(v.arr, ",")).num()
	}
	return 0, fmt.Errorf("an object has no numeric value")
}
