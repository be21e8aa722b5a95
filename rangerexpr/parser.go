package rangerexpr

import (
	"fmt"
	"strconv"
)

// The parser of Ranger's expression language: the grammar below, with
// JavaScript's precedence, into nodes the evaluator walks (eval.go).
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
