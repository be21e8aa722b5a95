package policy

import (
	"fmt"
	"strings"
	"unicode"
)

// A script is a condition written in the small part of Ranger's JavaScript
// condition language that pgranger evaluates itself:
//
//	script  = stmt [";"]
//	stmt    = "if" "(" expr ")" block ["else" block] | assign | expr
//	block   = "{" assign [";"] "}" | assign
//	assign  = "ctx.result" "=" expr
//	expr    = and { "||" and }
//	and     = unary { "&&" unary }
//	unary   = "!" unary | "(" expr ")" | "true" | "false" | call
//	call    = name [ "(" [string { "," string }] ")" ]
//
// where name is one of Ranger's boolean macros (IS_IN_ROLE, HAS_TAG, ...)
// or the ctx method it expands to (ctx.isInRole, ...). Anything else fails
// to parse, and the condition is then unknown (see conditions.go). The value
// is what RangerRequestScriptEvaluator.evaluateConditionScript yields: the
// script's last value when boolean, else ctx.result, which starts false.
type script struct {
	root stmtNode
}

type stmtNode struct {
	cond     exprNode // for if
	then     exprNode
	elseExpr exprNode
	isIf     bool
}

type exprNode interface {
	eval(rq *evalReq) bool
}

func (s *script) run(rq *evalReq) bool {
	st := s.root
	if !st.isIf {
		return st.then.eval(rq)
	}
	if st.cond.eval(rq) {
		return st.then.eval(rq)
	}
	if st.elseExpr != nil {
		return st.elseExpr.eval(rq)
	}
	return false
}

type token struct {
	kind string // "id", "str", or the punctuation itself
	text string
}

func lexScript(src string) ([]token, error) {
	var toks []token
	rs := []rune(src)
	for i := 0; i < len(rs); {
		c := rs[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '\'' || c == '"':
			q := c
			var sb strings.Builder
			i++
			for ; i < len(rs) && rs[i] != q; i++ {
				if rs[i] == '\\' {
					i++
					if i >= len(rs) {
						return nil, fmt.Errorf("unterminated string")
					}
					switch rs[i] {
					case 'n':
						sb.WriteRune('\n')
					case 't':
						sb.WriteRune('\t')
					default:
						sb.WriteRune(rs[i])
					}
					continue
				}
				sb.WriteRune(rs[i])
			}
			if i >= len(rs) {
				return nil, fmt.Errorf("unterminated string")
			}
			i++
			toks = append(toks, token{"str", sb.String()})
		case c == '&' || c == '|':
			if i+1 < len(rs) && rs[i+1] == c {
				toks = append(toks, token{string([]rune{c, c}), ""})
				i += 2
				continue
			}
			return nil, fmt.Errorf("unsupported operator %q", string(c))
		case c == '=':
			if i+1 < len(rs) && rs[i+1] == '=' {
				return nil, fmt.Errorf("comparison operators are not supported")
			}
			toks = append(toks, token{"=", ""})
			i++
		case c == '!':
			if i+1 < len(rs) && rs[i+1] == '=' {
				return nil, fmt.Errorf("comparison operators are not supported")
			}
			toks = append(toks, token{"!", ""})
			i++
		case strings.ContainsRune("(){};,", c):
			toks = append(toks, token{string(c), ""})
			i++
		case c == '_' || c == '$' || unicode.IsLetter(c):
			start := i
			for i < len(rs) && (rs[i] == '_' || rs[i] == '$' || rs[i] == '.' || unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) {
				i++
			}
			toks = append(toks, token{"id", string(rs[start:i])})
		default:
			return nil, fmt.Errorf("unsupported character %q", string(c))
		}
	}
	return toks, nil
}

type scriptParser struct {
	toks []token
	pos  int
}

func parseScript(src string) (*script, error) {
	toks, err := lexScript(src)
	if err != nil {
		return nil, err
	}
	p := &scriptParser{toks: toks}
	st, err := p.stmt()
	if err != nil {
		return nil, err
	}
	p.accept(";")
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("unexpected %q after the condition", p.peek().kind+p.peek().text)
	}
	return &script{root: st}, nil
}

func (p *scriptParser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{kind: "eof"}
}

func (p *scriptParser) accept(kind string) bool {
	if p.peek().kind == kind {
		p.pos++
		return true
	}
	return false
}

func (p *scriptParser) acceptID(text string) bool {
	t := p.peek()
	if t.kind == "id" && t.text == text {
		p.pos++
		return true
	}
	return false
}

func (p *scriptParser) expect(kind string) error {
	if !p.accept(kind) {
		return fmt.Errorf("expected %q", kind)
	}
	return nil
}

func (p *scriptParser) stmt() (stmtNode, error) {
	if p.acceptID("if") {
		if err := p.expect("("); err != nil {
			return stmtNode{}, err
		}
		cond, err := p.expr()
		if err != nil {
			return stmtNode{}, err
		}
		if err := p.expect(")"); err != nil {
			return stmtNode{}, err
		}
		then, err := p.block()
		if err != nil {
			return stmtNode{}, err
		}
		st := stmtNode{isIf: true, cond: cond, then: then}
		if p.acceptID("else") {
			if st.elseExpr, err = p.block(); err != nil {
				return stmtNode{}, err
			}
		}
		return st, nil
	}
	if p.peek().kind == "id" && p.peek().text == "ctx.result" {
		e, err := p.assign()
		return stmtNode{then: e}, err
	}
	e, err := p.expr()
	return stmtNode{then: e}, err
}

func (p *scriptParser) block() (exprNode, error) {
	if p.accept("{") {
		e, err := p.assign()
		if err != nil {
			return nil, err
		}
		p.accept(";")
		if err := p.expect("}"); err != nil {
			return nil, err
		}
		return e, nil
	}
	e, err := p.assign()
	if err != nil {
		return nil, err
	}
	p.accept(";")
	return e, nil
}

func (p *scriptParser) assign() (exprNode, error) {
	if !p.acceptID("ctx.result") {
		return nil, fmt.Errorf("only assignments to ctx.result are supported")
	}
	if err := p.expect("="); err != nil {
		return nil, err
	}
	return p.expr()
}

func (p *scriptParser) expr() (exprNode, error) {
	left, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.accept("||") {
		right, err := p.and()
		if err != nil {
			return nil, err
		}
		left = orNode{left, right}
	}
	return left, nil
}

func (p *scriptParser) and() (exprNode, error) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.accept("&&") {
		right, err := p.unary()
		if err != nil {
			return nil, err
		}
		left = andNode{left, right}
	}
	return left, nil
}

func (p *scriptParser) unary() (exprNode, error) {
	if p.accept("!") {
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return notNode{e}, nil
	}
	if p.accept("(") {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		return e, p.expect(")")
	}
	t := p.peek()
	if t.kind != "id" {
		return nil, fmt.Errorf("unexpected %q", t.kind+t.text)
	}
	p.pos++
	switch t.text {
	case "true":
		return constNode(true), nil
	case "false":
		return constNode(false), nil
	}
	var args []string
	called := false
	if p.accept("(") {
		called = true
		if !p.accept(")") {
			for {
				a := p.peek()
				if a.kind != "str" {
					return nil, fmt.Errorf("%s: only string arguments are supported", t.text)
				}
				p.pos++
				args = append(args, a.text)
				if p.accept(")") {
					break
				}
				if err := p.expect(","); err != nil {
					return nil, err
				}
			}
		}
	}
	return newCall(t.text, args, called)
}

type orNode struct{ l, r exprNode }
type andNode struct{ l, r exprNode }
type notNode struct{ e exprNode }
type constNode bool

func (n orNode) eval(rq *evalReq) bool  { return n.l.eval(rq) || n.r.eval(rq) }
func (n andNode) eval(rq *evalReq) bool { return n.l.eval(rq) && n.r.eval(rq) }
func (n notNode) eval(rq *evalReq) bool { return !n.e.eval(rq) }
func (n constNode) eval(*evalReq) bool  { return bool(n) }

type callNode struct {
	fn   func(rq *evalReq, args []string) bool
	args []string
}

func (n callNode) eval(rq *evalReq) bool { return n.fn(rq, n.args) }

type builtin struct {
	nargs []int // accepted argument counts
	paren bool  // a macro written with parentheses (IS_IN_ROLE('r')); false for IS_IN_ANY_GROUP
	fn    func(rq *evalReq, args []string) bool
}

// builtins maps Ranger's macros and the ctx methods they expand to
// (RangerRequestScriptEvaluator.getMacrosMap) onto pgranger's request data.
var builtins = map[string]builtin{}

func init() {
	inRole := func(rq *evalReq, a []string) bool { return rq.hasRole(a[0]) }
	inGroup := func(rq *evalReq, a []string) bool { return containsStr(rq.groups, a[0]) }
	anyGroup := func(rq *evalReq, _ []string) bool { return len(rq.groups) > 0 }
	anyRole := func(rq *evalReq, _ []string) bool { return len(rq.roles) > 0 }
	hasTag := func(rq *evalReq, a []string) bool {
		for _, t := range rq.tags {
			if t.typ == a[0] {
				return true
			}
		}
		return false
	}
	hasAnyTag := func(rq *evalReq, _ []string) bool { return len(rq.tags) > 0 }
	hasUserAttr := func(rq *evalReq, a []string) bool { _, ok := rq.userAttributes()[a[0]]; return ok }
	hasUgAttr := func(rq *evalReq, a []string) bool {
		for _, attrs := range rq.groupAttributes() {
			if _, ok := attrs[a[0]]; ok {
				return true
			}
		}
		return false
	}
	hasTagAttr := func(rq *evalReq, a []string) bool {
		for _, t := range rq.tags {
			if _, ok := t.attrs[a[0]]; ok {
				return true
			}
		}
		return false
	}
	accessed := func(after bool) func(rq *evalReq, a []string) bool {
		return func(rq *evalReq, a []string) bool {
			var val string
			if len(a) == 1 {
				if rq.curTag != nil {
					val = rq.curTag.attrs[a[0]]
				}
			} else {
				for _, t := range rq.tags {
					if t.typ == a[0] && len(t.attrs) > 0 {
						val = t.attrs[a[1]]
						break
					}
				}
			}
			expiry, ok := parseTagDate(val)
			if after {
				return !ok || !rq.at.Before(expiry) // isAccessedAfter: no date counts as after
			}
			return ok && !rq.at.After(expiry)
		}
	}
	reg := func(fn func(*evalReq, []string) bool, nargs []int, macroParen bool, macro string, methods ...string) {
		if macro != "" {
			builtins[macro] = builtin{nargs: nargs, paren: macroParen, fn: fn}
		}
		for _, m := range methods {
			builtins[m] = builtin{nargs: nargs, paren: true, fn: fn}
		}
	}
	one := []int{1}
	none := []int{0}
	not := func(f func(*evalReq, []string) bool) func(*evalReq, []string) bool {
		return func(rq *evalReq, a []string) bool { return !f(rq, a) }
	}
	reg(inRole, one, true, "IS_IN_ROLE", "ctx.isInRole")
	reg(inGroup, one, true, "IS_IN_GROUP", "ctx.isInGroup")
	reg(anyGroup, none, false, "IS_IN_ANY_GROUP", "ctx.isInAnyGroup")
	reg(anyRole, none, false, "IS_IN_ANY_ROLE", "ctx.isInAnyRole")
	reg(not(anyGroup), none, false, "IS_NOT_IN_ANY_GROUP")
	reg(not(anyRole), none, false, "IS_NOT_IN_ANY_ROLE")
	reg(hasTag, one, true, "HAS_TAG", "ctx.hasTag")
	reg(hasAnyTag, none, false, "HAS_ANY_TAG", "ctx.hasAnyTag")
	reg(not(hasAnyTag), none, false, "HAS_NO_TAG")
	reg(hasUserAttr, one, true, "HAS_USER_ATTR", "ctx.hasUserAttr")
	reg(hasUgAttr, one, true, "HAS_UG_ATTR", "ctx.hasUgAttr")
	reg(hasTagAttr, one, true, "HAS_TAG_ATTR", "ctx.hasTagAttr")
	reg(accessed(false), []int{1, 2}, true, "", "ctx.isAccessedBefore")
	reg(accessed(true), []int{1, 2}, true, "", "ctx.isAccessedAfter")
}

func newCall(name string, args []string, called bool) (exprNode, error) {
	b, ok := builtins[name]
	if !ok {
		return nil, fmt.Errorf("%s is not supported", name)
	}
	if called != b.paren {
		if b.paren {
			return nil, fmt.Errorf("%s needs arguments", name)
		}
		return nil, fmt.Errorf("%s takes no parentheses", name)
	}
	okCount := false
	for _, n := range b.nargs {
		if len(args) == n {
			okCount = true
		}
	}
	if !okCount {
		return nil, fmt.Errorf("%s: wrong number of arguments", name)
	}
	return callNode{fn: b.fn, args: args}, nil
}
