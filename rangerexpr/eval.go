package rangerexpr

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ---------------------------------------------------------------------------
// Values

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

// ---------------------------------------------------------------------------
// Lexer

type exprTok struct {
	kind string // "str", "num", "id", or the punctuation itself; "" at the end
	text string
	num  float64
}

func lexExpr(src string) ([]exprTok, error) {
	var toks []exprTok
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'' || c == '"':
			var sb strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != c; j++ {
				if src[j] != '\\' {
					sb.WriteByte(src[j])
					continue
				}
				j++
				if j >= len(src) {
					break
				}
				switch src[j] {
				case 'n':
					sb.WriteByte('\n')
				case 't':
					sb.WriteByte('\t')
				case 'r':
					sb.WriteByte('\r')
				case '0':
					sb.WriteByte(0)
				default:
					sb.WriteByte(src[j])
				}
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated string")
			}
			toks = append(toks, exprTok{kind: "str", text: sb.String()})
			i = j + 1
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			f, err := strconv.ParseFloat(src[i:j], 64)
			if err != nil {
				return nil, fmt.Errorf("bad number %q", src[i:j])
			}
			toks = append(toks, exprTok{kind: "num", text: src[i:j], num: f})
			i = j
		case c == '_' || c == '$' || c < utf8.RuneSelf && unicode.IsLetter(rune(c)):
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '$' || src[j] < utf8.RuneSelf && (unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])))) {
				j++
			}
			toks = append(toks, exprTok{kind: "id", text: src[i:j]})
			i = j
		default:
			op := ""
			for _, cand := range []string{"===", "!==", "==", "!=", "<=", ">=", "&&", "||", "(", ")", "[", "]", "{", "}", ".", ",", ";", "?", ":", "!", "<", ">", "+", "-", "*", "/", "%", "="} {
				if strings.HasPrefix(src[i:], cand) {
					op = cand
					break
				}
			}
			if op == "" {
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, fmt.Errorf("%q is not supported", string(r))
			}
			toks = append(toks, exprTok{kind: op})
			i += len(op)
		}
	}
	return toks, nil
}

// ---------------------------------------------------------------------------
// Parser
//
//	expr    = or [ "?" expr ":" expr ]
//	or      = and { "||" and }
//	and     = eq { "&&" eq }
//	eq      = rel { ("==" | "!=" | "===" | "!==") rel }
//	rel     = add { ("<" | ">" | "<=" | ">=") add }
//	add     = unary { "+" unary }
//	unary   = ("!" | "-") unary | postfix
//	postfix = primary { "." name | "[" expr "]" | "(" [expr { "," expr }] ")" }
//	primary = string | number | true | false | null | undefined | name
//	        | "(" expr ")" | "[" [expr { "," expr }] "]" | "[[" postfix ["," string] "]]"

type exprNode interface {
	eval(ev *exprEval) (Value, error)
}

type exprParser struct {
	toks   []exprTok
	pos    int
	depth  int
	locals map[string]bool // names a script declared with var, let or const
	// readsClient: the text names REQ or a ctx method that reads the
	// client's request (clientMethods).
	readsClient bool
	readsTime   bool // REQ or a ctx method of timeMethods
}

// timeMethods read the access time.
var timeMethods = map[string]bool{
	"isAccessedBefore": true, "isAccessedAfter": true, "isAccessTimeAfter": true,
	"isAccessTimeBefore": true, "isAccessTimeBetween": true,
}

// clientMethods read what differs between clients of one identity.
var clientMethods = map[string]bool{
	"getClientIPAddress": true, "getRequestContextAttribute": true, "getSessionId": true, "getAction": true,
}

const (
	maxExprDepth  = 64
	maxExprTokens = 4096
)

func (t exprTok) describe() string {
	switch t.kind {
	case "":
		return "end of expression"
	case "str":
		return strconv.Quote(t.text)
	case "num", "id":
		return t.text
	}
	return strconv.Quote(t.kind)
}

func (p *exprParser) peek() exprTok {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return exprTok{}
}

func (p *exprParser) peekAt(k int) exprTok {
	if p.pos+k < len(p.toks) {
		return p.toks[p.pos+k]
	}
	return exprTok{}
}

func (p *exprParser) accept(kind string) bool {
	if p.peek().kind == kind {
		p.pos++
		return true
	}
	return false
}

func (p *exprParser) expect(kind string) error {
	if !p.accept(kind) {
		return fmt.Errorf("expected %q, found %s", kind, p.peek().describe())
	}
	return nil
}

func (p *exprParser) enter() error {
	p.depth++
	if p.depth > maxExprDepth {
		return fmt.Errorf("the expression is nested too deeply")
	}
	return nil
}

func (p *exprParser) expr() (exprNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	c, err := p.or()
	if err != nil {
		return nil, err
	}
	if !p.accept("?") {
		return c, nil
	}
	t, err := p.expr()
	if err != nil {
		return nil, err
	}
	if err := p.expect(":"); err != nil {
		return nil, err
	}
	f, err := p.expr()
	if err != nil {
		return nil, err
	}
	return condNode{c, t, f}, nil
}

func (p *exprParser) binary(next func() (exprNode, error), ops ...string) (exprNode, error) {
	left, err := next()
	if err != nil {
		return nil, err
	}
	for {
		op := ""
		for _, o := range ops {
			if p.peek().kind == o {
				op = o
			}
		}
		if op == "" {
			return left, nil
		}
		p.pos++
		right, err := next()
		if err != nil {
			return nil, err
		}
		left = binNode{op, left, right}
	}
}

func (p *exprParser) or() (exprNode, error)  { return p.binary(p.and, "||") }
func (p *exprParser) and() (exprNode, error) { return p.binary(p.eq, "&&") }
func (p *exprParser) eq() (exprNode, error)  { return p.binary(p.rel, "==", "!=", "===", "!==") }
func (p *exprParser) rel() (exprNode, error) { return p.binary(p.add, "<", ">", "<=", ">=") }
func (p *exprParser) add() (exprNode, error) { return p.binary(p.mul, "+", "-") }
func (p *exprParser) mul() (exprNode, error) { return p.binary(p.unary, "*", "/", "%") }

func (p *exprParser) unary() (exprNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	switch {
	case p.accept("!"):
		x, err := p.unary()
		return notNode{x}, err
	case p.accept("-"):
		x, err := p.unary()
		return negNode{x}, err
	}
	return p.postfix()
}

func (p *exprParser) postfix() (exprNode, error) {
	n, err := p.primary()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.accept("."):
			t := p.peek()
			if t.kind != "id" {
				return nil, fmt.Errorf("expected a name after '.', found %s", t.describe())
			}
			p.pos++
			if clientMethods[t.text] {
				p.readsClient = true
			}
			if timeMethods[t.text] {
				p.readsTime = true
			}
			n = memberNode{obj: n, name: t.text}
		case p.peek().kind == "[" && p.peekAt(1).kind != "[":
			p.pos++
			idx, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			n = indexNode{obj: n, idx: idx}
		case p.accept("("):
			m, ok := n.(memberNode)
			if !ok {
				return nil, fmt.Errorf("only methods (ctx.isInGroup('g'), s.split(','), …) can be called")
			}
			args, err := p.list(")")
			if err != nil {
				return nil, err
			}
			n = callNode{obj: m.obj, method: m.name, args: args}
		default:
			return n, nil
		}
	}
}

// list parses comma-separated expressions up to end.
func (p *exprParser) list(end string) ([]exprNode, error) {
	var out []exprNode
	if p.accept(end) {
		return out, nil
	}
	for {
		a, err := p.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, a)
		if p.accept(end) {
			return out, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}

func (p *exprParser) primary() (exprNode, error) {
	t := p.peek()
	switch t.kind {
	case "str":
		p.pos++
		return litNode{jsString(t.text)}, nil
	case "num":
		p.pos++
		return litNode{jsNumber(t.num)}, nil
	case "(":
		p.pos++
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		return e, p.expect(")")
	case "[":
		p.pos++
		if p.accept("[") {
			// Ranger's shorthand: [[x]] is x.split(","), [[x,'|']] x.split("|").
			x, err := p.postfix()
			if err != nil {
				return nil, err
			}
			sep := ","
			if p.accept(",") {
				s := p.peek()
				if s.kind != "str" {
					return nil, fmt.Errorf("[[x, sep]] needs a string separator")
				}
				p.pos++
				sep = s.text
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			return callNode{obj: x, method: "split", args: []exprNode{litNode{jsString(sep)}}}, nil
		}
		elems, err := p.list("]")
		if err != nil {
			return nil, err
		}
		return arrNode{elems}, nil
	case "id":
		p.pos++
		return p.name(t.text)
	}
	return nil, fmt.Errorf("unexpected %s", t.describe())
}

// macro is one of Ranger's macros (RangerRequestScriptEvaluator.getMacrosMap):
// the ctx method it expands to, whether the expansion already calls it
// (UG_NAMES_CSV → ctx.ugNamesCsv()), and whether it is negated
// (IS_NOT_IN_ANY_GROUP → !ctx.isInAnyGroup()).
type macro struct {
	method string
	called bool
	negate bool
}

var macros = map[string]macro{
	"GET_UG_NAMES":           {method: "ugNames"},
	"GET_UG_NAMES_Q":         {method: "ugNamesQ"},
	"GET_UG_ATTR_NAMES":      {method: "ugAttrNames"},
	"GET_UG_ATTR_NAMES_Q":    {method: "ugAttrNamesQ"},
	"GET_UG_ATTR":            {method: "ugAttr"},
	"GET_UG_ATTR_Q":          {method: "ugAttrQ"},
	"GET_UR_NAMES":           {method: "urNames"},
	"GET_UR_NAMES_Q":         {method: "urNamesQ"},
	"GET_USER_ATTR_NAMES":    {method: "userAttrNames"},
	"GET_USER_ATTR_NAMES_Q":  {method: "userAttrNamesQ"},
	"GET_USER_ATTR":          {method: "userAttr"},
	"GET_USER_ATTR_Q":        {method: "userAttrQ"},
	"GET_UG_ATTR_CSV":        {method: "ugAttrCsv"},
	"GET_UG_ATTR_Q_CSV":      {method: "ugAttrCsvQ"},
	"UG_ATTR_NAMES_CSV":      {method: "ugAttrNamesCsv", called: true},
	"UG_ATTR_NAMES_Q_CSV":    {method: "ugAttrNamesCsvQ", called: true},
	"UG_NAMES_CSV":           {method: "ugNamesCsv", called: true},
	"UG_NAMES_Q_CSV":         {method: "ugNamesCsvQ", called: true},
	"UR_NAMES_CSV":           {method: "urNamesCsv", called: true},
	"UR_NAMES_Q_CSV":         {method: "urNamesCsvQ", called: true},
	"USER_ATTR_NAMES_CSV":    {method: "userAttrNamesCsv", called: true},
	"USER_ATTR_NAMES_Q_CSV":  {method: "userAttrNamesCsvQ", called: true},
	"HAS_USER_ATTR":          {method: "hasUserAttr"},
	"HAS_UG_ATTR":            {method: "hasUgAttr"},
	"IS_IN_GROUP":            {method: "isInGroup"},
	"IS_IN_ROLE":             {method: "isInRole"},
	"IS_IN_ANY_GROUP":        {method: "isInAnyGroup", called: true},
	"IS_IN_ANY_ROLE":         {method: "isInAnyRole", called: true},
	"IS_NOT_IN_ANY_GROUP":    {method: "isInAnyGroup", called: true, negate: true},
	"IS_NOT_IN_ANY_ROLE":     {method: "isInAnyRole", called: true, negate: true},
	"GET_TAG_NAMES":          {method: "tagNames"},
	"GET_TAG_NAMES_Q":        {method: "tagNamesQ"},
	"GET_TAG_ATTR_NAMES":     {method: "tagAttrNames"},
	"GET_TAG_ATTR_NAMES_Q":   {method: "tagAttrNamesQ"},
	"GET_TAG_ATTR":           {method: "tagAttr"},
	"GET_TAG_ATTR_Q":         {method: "tagAttrQ"},
	"GET_TAG_ATTR_CSV":       {method: "tagAttrCsv"},
	"GET_TAG_ATTR_Q_CSV":     {method: "tagAttrCsvQ"},
	"TAG_ATTR_NAMES_CSV":     {method: "tagAttrNamesCsv", called: true},
	"TAG_ATTR_NAMES_Q_CSV":   {method: "tagAttrNamesCsvQ", called: true},
	"TAG_NAMES_CSV":          {method: "tagNamesCsv", called: true},
	"TAG_NAMES_Q_CSV":        {method: "tagNamesCsvQ", called: true},
	"HAS_TAG":                {method: "hasTag"},
	"HAS_ANY_TAG":            {method: "hasAnyTag", called: true},
	"HAS_NO_TAG":             {method: "hasAnyTag", called: true, negate: true},
	"HAS_TAG_ATTR":           {method: "hasTagAttr"},
	"IS_ACCESS_TIME_AFTER":   {method: "isAccessTimeAfter"},
	"IS_ACCESS_TIME_BEFORE":  {method: "isAccessTimeBefore"},
	"IS_ACCESS_TIME_BETWEEN": {method: "isAccessTimeBetween"},
}

// reqUnavailable are the fields of Ranger's REQ that pgranger does not
// offer, and why. A rewrite is cached per statement text, identity,
// database, search_path, policy generation and catalog version: a value
// that changes with the client or the clock would be frozen into the
// cached rewrite, so such fields deny the table instead of being guessed.
var reqUnavailable = map[string]string{
	"accessTime":         "a rewrite is cached per statement and identity, so a row filter or mask cannot depend on the time of access",
	"clientIPAddress":    "a rewrite is cached per statement and identity, so a row filter or mask cannot depend on the client's address",
	"remoteIPAddress":    "a rewrite is cached per statement and identity, so a row filter or mask cannot depend on the client's address",
	"forwardedAddresses": "a rewrite is cached per statement and identity, so a row filter or mask cannot depend on the client's address",
	"sessionId":          "a rewrite is cached per statement and identity, so a row filter or mask cannot depend on the session",
	"action":             "pgranger has no Hive operation name for a statement",
	"clientType":         "pgranger has no Hive client type",
	"clusterName":        "pgranger has no cluster name",
	"clusterType":        "pgranger has no cluster type",
	"requestData":        "the statement text is not offered to row filters and masks",
	"context":            "the request context is not offered to row filters and masks",
}

func (p *exprParser) name(id string) (exprNode, error) {
	switch id {
	case "true":
		return litNode{jsTrue}, nil
	case "false":
		return litNode{jsFalse}, nil
	case "null":
		return litNode{Value{kind: jsNull}}, nil
	case "undefined":
		return litNode{jsUndefined}, nil
	case "USER", "UGNAMES", "URNAMES", "UG", "UGA", "ctx", "TAGS", "TAGNAMES", "TAG", "tagAttr", "REQ", "RES":
		if id == "REQ" {
			p.readsClient, p.readsTime = true, true // REQ.accessTime
		}
		return varNode(id), nil
	case "_ctx":
		return nil, fmt.Errorf("_ctx is not supported in pgranger's expressions; use REQ, RES, TAGS, TAG, …")
	case "tag":
		return nil, fmt.Errorf("tag (Ranger's Java tag object) is not supported in pgranger's expressions; use TAG")
	}
	if p.locals[id] {
		return localNode(id), nil
	}
	m, ok := macros[id]
	if ok && timeMethods[m.method] {
		p.readsTime = true
	}
	if !ok {
		return nil, fmt.Errorf("%s is not supported: it is not a known variable or macro", id)
	}
	if m.called {
		if p.peek().kind == "(" {
			return nil, fmt.Errorf("%s takes no arguments", id)
		}
		var n exprNode = callNode{obj: varNode("ctx"), method: m.method}
		if m.negate {
			n = notNode{n}
		}
		return n, nil
	}
	if err := p.expect("("); err != nil {
		return nil, fmt.Errorf("%s needs arguments in parentheses", id)
	}
	args, err := p.list(")")
	if err != nil {
		return nil, err
	}
	return callNode{obj: varNode("ctx"), method: m.method, args: args}, nil
}

// ---------------------------------------------------------------------------
// Evaluation

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

func argStr(args []Value, i int, method string) (string, error) {
	if i >= len(args) {
		return "", fmt.Errorf("%s needs %d argument(s)", method, i+1)
	}
	return args[i].str()
}

func strMethod(s, method string, args []Value) (Value, error) {
	switch method {
	case "toUpperCase":
		return jsString(strings.ToUpper(s)), nil
	case "toLowerCase":
		return jsString(strings.ToLower(s)), nil
	case "trim":
		return jsString(strings.TrimSpace(s)), nil
	case "split":
		if len(args) == 0 || args[0].kind == jsUndef && args[0].missing == "" {
			return Value{kind: jsArr, arr: []string{s}}, nil
		}
		sep, err := args[0].str()
		if err != nil {
			return Value{}, err
		}
		if s == "" && sep != "" {
			return Value{kind: jsArr, arr: []string{""}}, nil
		}
		var parts []string
		if sep == "" {
			for _, r := range s {
				parts = append(parts, string(r))
			}
		} else {
			parts = strings.Split(s, sep)
		}
		return Value{kind: jsArr, arr: parts}, nil
	case "includes", "startsWith", "endsWith", "indexOf":
		x, err := argStr(args, 0, method)
		if err != nil {
			return Value{}, err
		}
		switch method {
		case "includes":
			return jsBoolean(strings.Contains(s, x)), nil
		case "startsWith":
			return jsBoolean(strings.HasPrefix(s, x)), nil
		case "endsWith":
			return jsBoolean(strings.HasSuffix(s, x)), nil
		}
		i := strings.Index(s, x)
		if i > 0 {
			i = len(utf16Units(s[:i]))
		}
		return jsNumber(float64(i)), nil
	case "toString":
		return jsString(s), nil
	}
	return Value{}, fmt.Errorf("string method %s is not supported", method)
}

func arrMethod(arr []string, method string, args []Value) (Value, error) {
	switch method {
	case "includes", "indexOf":
		if len(args) == 0 {
			return Value{}, fmt.Errorf("%s needs an argument", method)
		}
		x, err := args[0].str()
		if err != nil {
			return Value{}, err
		}
		for i, s := range arr {
			if s == x {
				if method == "includes" {
					return jsTrue, nil
				}
				return jsNumber(float64(i)), nil
			}
		}
		if method == "includes" {
			return jsFalse, nil
		}
		return jsNumber(-1), nil
	case "join":
		sep := ","
		if len(args) > 0 && args[0].kind != jsUndef {
			s, err := args[0].str()
			if err != nil {
				return Value{}, err
			}
			sep = s
		}
		return jsString(strings.Join(arr, sep)), nil
	case "intersects":
		// Ranger's polyfill: some element of this list is in the other.
		if len(args) == 0 || args[0].kind == jsNull || args[0].kind == jsUndef && args[0].missing == "" {
			return jsFalse, nil
		}
		other := args[0]
		if other.kind != jsArr {
			return Value{}, fmt.Errorf("intersects needs a list")
		}
		for _, a := range arr {
			for _, b := range other.arr {
				if a == b {
					return jsTrue, nil
				}
			}
		}
		return jsFalse, nil
	case "toString":
		return jsString(strings.Join(arr, ",")), nil
	}
	return Value{}, fmt.Errorf("list method %s is not supported", method)
}

// listArgs are the optional arguments of Ranger's list functions:
// (defaultValue, separator=",", openQuote="'", closeQuote=openQuote).
// A null separator or quote is the empty string.
type listArgs struct {
	def        string
	hasDef     bool
	sep        string
	open, clos string
}

func parseListArgs(args []Value, quoted bool) (listArgs, error) {
	la := listArgs{sep: ","}
	opt := func(i int) (s string, given, isNull bool, err error) {
		if i >= len(args) {
			return "", false, false, nil
		}
		v := args[i]
		if v.kind == jsNull || v.kind == jsUndef && v.missing == "" {
			return "", true, true, nil
		}
		s, err = v.str()
		return s, true, false, err
	}
	s, given, isNull, err := opt(0)
	if err != nil {
		return la, err
	}
	la.def, la.hasDef = s, given && !isNull
	if s, given, _, err = opt(1); err != nil {
		return la, err
	} else if given {
		la.sep = s
	}
	if !quoted {
		return la, nil
	}
	la.open = "'"
	if s, given, _, err = opt(2); err != nil {
		return la, err
	} else if given {
		la.open = s
	}
	la.clos = la.open
	if s, given, isNull, err = opt(3); err != nil {
		return la, err
	} else if given && !isNull {
		la.clos = s
	}
	return la, nil
}

// csv is Ranger's toCsv / toCsvQ: the values joined, the default when there
// are none. The result keeps the items so it can be rendered as literals.
func csv(values []string, args []Value, quoted bool) (Value, error) {
	la, err := parseListArgs(args, quoted)
	if err != nil {
		return Value{}, err
	}
	items := values
	if len(items) == 0 && la.hasDef {
		items = []string{la.def}
	}
	l := &listVal{items: items, sep: la.sep}
	var text strings.Builder
	if quoted {
		switch {
		case la.open == "'" && la.clos == "'":
			l.quoted = true
		case la.open == "" && la.clos == "":
		default:
			l.open, l.clos = la.open, la.clos
		}
	}
	for i, it := range items {
		if i > 0 {
			text.WriteString(la.sep)
		}
		text.WriteString(la.open + it + la.clos)
	}
	return Value{kind: jsStr, s: text.String(), list: l}, nil
}

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
		// RangerRequestScriptEvaluator.getTagAttr: the attribute's values
		// over every tag of the resource, sorted.
		x, err := one()
		if err != nil {
			return Value{}, err
		}
		var vals []string
		for _, t := range env.Tags {
			if v, ok := t.Attributes[x]; ok {
				vals = append(vals, v)
			}
		}
		sort.Strings(vals)
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
