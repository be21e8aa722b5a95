package rangerexpr

import (
	"fmt"
)

// Program is a parsed expression or script, safe for concurrent use.
type Program struct {
	stmts       []stmt
	readsClient bool
	readsTime   bool
}

// ReadsTime reports whether the program reads the access time: REQ,
// ctx.isAccessedBefore/After, ctx.isAccessTime… and their macros.
func (pr *Program) ReadsTime() bool { return pr.readsTime }

// ReadsClient reports whether the program reads what differs between
// clients of one identity: REQ, ctx.getClientIPAddress(),
// ctx.getRequestContextAttribute(), ctx.getSessionId(), ctx.getAction().
func (pr *Program) ReadsClient() bool { return pr.readsClient }

// Scripts, in addition to expressions:
//
//	script = { stmt }
//	stmt   = ";" | "{" { stmt } "}" | "if" "(" expr ")" stmt [ "else" stmt ]
//	       | ("var" | "let" | "const") name "=" expr [";"]
//	       | ("ctx.result" | name) "=" expr [";"] | expr [";"]
type stmt interface {
	// exec runs the statement; ok reports whether it has a completion
	// value (JavaScript's: a declaration and an if that ran no branch
	// have none).
	exec(ev *exprEval) (v Value, ok bool, err error)
}

// ParseExpr parses one ${{…}} expression.
func ParseExpr(src string) (*Program, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	n, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("%s is not supported here: an expression is one value, not a script", p.peek().describe())
	}
	return &Program{stmts: []stmt{exprStmt{n}}, readsClient: p.readsClient, readsTime: p.readsTime}, nil
}

// ParseScript parses a condition script.
func ParseScript(src string) (*Program, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	p.locals = map[string]bool{}
	var out []stmt
	for p.pos < len(p.toks) {
		s, err := p.stmt()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return &Program{stmts: out, readsClient: p.readsClient, readsTime: p.readsTime}, nil
}

func newParser(src string) (*exprParser, error) {
	toks, err := lexExpr(src)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("the expression is empty")
	}
	if len(toks) > maxExprTokens {
		return nil, fmt.Errorf("the expression is too long")
	}
	return &exprParser{toks: toks}, nil
}

// Eval evaluates an expression (or a script's completion value).
func Eval(src string, env *Env) (Value, error) {
	p, err := ParseExpr(src)
	if err != nil {
		return Value{}, err
	}
	return p.Eval(env)
}

// Eval runs the program and returns its completion value (undefined
// when it has none).
func (pr *Program) Eval(env *Env) (Value, error) {
	v, _, err := pr.run(env)
	return v, err
}

func (pr *Program) run(env *Env) (Value, *exprEval, error) {
	ev := &exprEval{env: env, limit: env.Budget}
	if ev.limit <= 0 {
		ev.limit = DefaultBudget
	}
	last := jsUndefined
	for _, s := range pr.stmts {
		v, ok, err := s.exec(ev)
		if err != nil {
			return Value{}, ev, err
		}
		if ok {
			last = v
		}
	}
	return last, ev, nil
}

// Condition is RangerRequestScriptEvaluator.evaluateConditionScript
// followed by getResult: the script's completion value when it is a
// boolean, else ctx.result (false unless the script set it). An error
// (a parse error is the caller's) is returned as such: the caller fails
// closed, where Ranger would log it and use false.
func (pr *Program) Condition(env *Env) (bool, error) {
	v, ev, err := pr.run(env)
	if err != nil {
		return false, err
	}
	if v.kind == jsBool {
		return v.b, nil
	}
	return ev.result, nil
}

func (p *exprParser) stmt() (stmt, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	t := p.peek()
	switch {
	case p.accept(";"):
		return emptyStmt{}, nil
	case p.accept("{"):
		var body []stmt
		for !p.accept("}") {
			if p.pos >= len(p.toks) {
				return nil, fmt.Errorf("expected \"}\", found end of script")
			}
			s, err := p.stmt()
			if err != nil {
				return nil, err
			}
			body = append(body, s)
		}
		return blockStmt(body), nil
	case t.kind == "id" && t.text == "if":
		p.pos++
		if err := p.expect("("); err != nil {
			return nil, err
		}
		c, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		then, err := p.stmt()
		if err != nil {
			return nil, err
		}
		st := ifStmt{cond: c, then: then}
		if n := p.peek(); n.kind == "id" && n.text == "else" {
			p.pos++
			if st.els, err = p.stmt(); err != nil {
				return nil, err
			}
		}
		return st, nil
	case t.kind == "id" && (t.text == "var" || t.text == "let" || t.text == "const"):
		p.pos++
		name := p.peek()
		if name.kind != "id" {
			return nil, fmt.Errorf("expected a name after %s, found %s", t.text, name.describe())
		}
		p.pos++
		if err := p.expect("="); err != nil {
			return nil, err
		}
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		p.locals[name.text] = true
		p.accept(";")
		return declStmt{name: name.text, x: x}, nil
	case t.kind == "id" && t.text == "ctx" && p.peekAt(1).kind == "." && p.peekAt(2).text == "result" && p.peekAt(3).kind == "=":
		p.pos += 4
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		p.accept(";")
		return resultStmt{x}, nil
	case t.kind == "id" && p.locals[t.text] && p.peekAt(1).kind == "=":
		p.pos += 2
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		p.accept(";")
		return assignStmt{name: t.text, x: x}, nil
	}
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) && !p.accept(";") && p.peek().kind != "}" {
		return nil, fmt.Errorf("unexpected %s", p.peek().describe())
	}
	return exprStmt{x}, nil
}

type emptyStmt struct{}
type blockStmt []stmt
type ifStmt struct {
	cond      exprNode
	then, els stmt
}
type declStmt struct {
	name string
	x    exprNode
}
type assignStmt declStmt
type resultStmt struct{ x exprNode }
type exprStmt struct{ x exprNode }
type localNode string

func (emptyStmt) exec(*exprEval) (Value, bool, error) { return Value{}, false, nil }

func (b blockStmt) exec(ev *exprEval) (Value, bool, error) {
	var last Value
	has := false
	for _, s := range b {
		v, ok, err := s.exec(ev)
		if err != nil {
			return Value{}, false, err
		}
		if ok {
			last, has = v, true
		}
	}
	return last, has, nil
}

func (s ifStmt) exec(ev *exprEval) (Value, bool, error) {
	c, err := ev.eval(s.cond)
	if err != nil {
		return Value{}, false, err
	}
	if c.truthy() {
		v, _, err := s.then.exec(ev)
		return v, true, err // an if that ran a branch completes with it (undefined if none)
	}
	if s.els != nil {
		v, _, err := s.els.exec(ev)
		return v, true, err
	}
	return jsUndefined, true, nil
}

func (s declStmt) exec(ev *exprEval) (Value, bool, error) {
	v, err := ev.eval(s.x)
	if err != nil {
		return Value{}, false, err
	}
	if ev.locals == nil {
		ev.locals = map[string]Value{}
	}
	ev.locals[s.name] = v
	return Value{}, false, nil
}

func (s assignStmt) exec(ev *exprEval) (Value, bool, error) {
	v, err := ev.eval(s.x)
	if err != nil {
		return Value{}, false, err
	}
	if ev.locals == nil {
		ev.locals = map[string]Value{}
	}
	ev.locals[s.name] = v
	return v, true, nil
}

func (s resultStmt) exec(ev *exprEval) (Value, bool, error) {
	v, err := ev.eval(s.x)
	if err != nil {
		return Value{}, false, err
	}
	ev.result = v.truthy() // Java's setResult(boolean) of the script's value
	return v, true, nil
}

func (s exprStmt) exec(ev *exprEval) (Value, bool, error) {
	v, err := ev.eval(s.x)
	return v, err == nil, err
}

func (n localNode) eval(ev *exprEval) (Value, error) {
	v, ok := ev.locals[string(n)]
	if !ok {
		return Value{}, fmt.Errorf("%s is used before it is declared", string(n))
	}
	return v, nil
}
