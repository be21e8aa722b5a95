package sqlrewrite

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// SQL-level prepared statements (PREPARE, EXECUTE, DEALLOCATE).
//
// pgranger cannot let the backend keep a statement prepared with SQL
// PREPARE: nothing would prepare it again when the policy changes (the
// extended protocol's Parse is re-checked at every Bind; EXECUTE is not),
// and a protocol-level Bind can name any backend statement. So a PREPARE
// is analysed for the user (every access check runs then, as in Hive's
// compile step), and remembered in the session with its relation names
// resolved — but what the backend prepares is an empty placeholder
// statement (PREPARE pgranger_p_<digest> AS SELECT), which gives the
// client its PREPARE command tag and holds no data. EXECUTE p(args) is
// the remembered statement with the arguments in place of its parameters
// (cast to the declared types), analysed and rewritten under the policy
// in force at that moment, so it can never run under an older policy.
// DEALLOCATE p drops it (and the placeholder); DEALLOCATE ALL and DISCARD
// ALL drop them all. EXECUTE of a name pgranger did not see prepared with
// SQL PREPARE in this session — a statement prepared through the extended
// protocol — is refused, since it would skip the re-check.
//
// Differences from PostgreSQL, all in the safe direction: errors that
// PREPARE would report during parse analysis (an unknown column) come at
// EXECUTE; an argument is evaluated once per use of its parameter (a
// volatile argument such as random() can differ between uses); a
// parameter without a declared type takes the argument's type; the plan
// is not cached.

// maxSQLPrepared bounds the statements a session may have prepared.
const maxSQLPrepared = 1000

// sqlPrepared is a session's SQL-level prepared statements.
type sqlPrepared struct {
	mu    sync.Mutex
	stmts map[string]*preparedSQL
}

type preparedSQL struct {
	text string // deparsed PREPARE statement with names resolved
	orig string // the user's PREPARE statement, deparsed (duplicate check)
	argc int    // parameters EXECUTE must supply
	// dropped marks a deallocated statement. It is kept (until PREPARE
	// of the name again, DEALLOCATE ALL or DISCARD ALL) so that a
	// DEALLOCATE checked again before it runs (the extended protocol
	// re-checks at Bind) still names the placeholder.
	dropped bool
}

// prepOverlay holds the changes the statements of one text make to the
// session's prepared statements; they are applied only when the whole
// text is allowed (rewrite).
type prepOverlay struct {
	sess    *Session
	cleared bool
	set     map[string]*preparedSQL
	touched bool // the text uses prepared statements: its result is not cached
}

// lookup returns the statement prepared as name, dropped ones included.
func (o *prepOverlay) lookup(name string) *preparedSQL {
	if p, ok := o.set[name]; ok {
		return p
	}
	if o.cleared || o.sess.prepared == nil {
		return nil
	}
	sp := o.sess.prepared
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.stmts[name]
}

// live returns the statement prepared as name, nil when there is none.
func (o *prepOverlay) live(name string) *preparedSQL {
	if p := o.lookup(name); p != nil && !p.dropped {
		return p
	}
	return nil
}

func (o *prepOverlay) put(name string, p *preparedSQL) {
	if o.set == nil {
		o.set = map[string]*preparedSQL{}
	}
	o.set[name] = p
	o.touched = true
}

func (o *prepOverlay) clear() {
	o.cleared, o.set, o.touched = true, nil, true
}

func (o *prepOverlay) count() int {
	n := len(o.set)
	if !o.cleared && o.sess.prepared != nil {
		sp := o.sess.prepared
		sp.mu.Lock()
		for name := range sp.stmts {
			if _, over := o.set[name]; !over {
				n++
			}
		}
		sp.mu.Unlock()
	}
	return n
}

// apply makes the changes the session's.
func (o *prepOverlay) apply() {
	if !o.cleared && len(o.set) == 0 {
		return
	}
	if o.sess.prepared == nil {
		o.sess.prepared = &sqlPrepared{}
	}
	sp := o.sess.prepared
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if o.cleared || sp.stmts == nil {
		sp.stmts = map[string]*preparedSQL{}
	}
	for name, p := range o.set {
		sp.stmts[name] = p
	}
}

// placeholderName is the backend statement standing for SQL-prepared name.
func placeholderName(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "pgranger_p_" + hex.EncodeToString(sum[:12])
}

func (r *stmtRewriter) prepareClass(n *pg.Node) {
	switch v := n.Node.(type) {
	case *pg.Node_PrepareStmt:
		r.prepareStatement(v.PrepareStmt)
	case *pg.Node_ExecuteStmt:
		r.prep.touched = true
		r.executeStatement(n)
		r.finishIfOK()
	case *pg.Node_DeallocateStmt:
		d := v.DeallocateStmt
		r.prep.touched = true
		if d.Isall || d.Name == "" {
			r.prep.clear()
			return
		}
		have := r.prep.lookup(d.Name)
		if have == nil {
			// Not a statement pgranger prepared for SQL: one prepared
			// through the extended protocol (clients deallocate those with
			// SQL too); the backend answers as it would.
			return
		}
		r.prep.put(d.Name, &preparedSQL{orig: have.orig, dropped: true})
		d.Name = placeholderName(d.Name)
		r.changed = true
	}
}

func (r *stmtRewriter) prepareStatement(p *pg.PrepareStmt) {
	user := r.sess.Subject.User
	if p.Query == nil {
		r.fail(errorf(CodeFeatureNotSupported, "PREPARE without a statement"))
		return
	}
	switch p.Query.Node.(type) {
	case *pg.Node_SelectStmt, *pg.Node_InsertStmt, *pg.Node_UpdateStmt, *pg.Node_DeleteStmt, *pg.Node_MergeStmt:
	default:
		r.fail(denyf("PREPARE of %s is not allowed through pgranger (user %q)", statementKind(p.Query), user))
		return
	}
	if sel := p.Query.GetSelectStmt(); sel != nil && leftmostSelect(sel).IntoClause != nil {
		r.fail(denyf("PREPARE of SELECT INTO is not allowed through pgranger (user %q)", user))
		return
	}
	orig, err := deparseNode(&pg.Node{Node: &pg.Node_PrepareStmt{PrepareStmt: p}})
	if err != nil {
		r.fail(err)
		return
	}
	if have := r.prep.live(p.Name); have != nil && have.orig != orig {
		// The same text again is the extended protocol checking it once
		// more before it runs (or a real duplicate, which the backend's
		// placeholder then refuses as PostgreSQL would).
		r.fail(&Error{Code: "42P05", Message: "prepared statement \"" + p.Name + "\" already exists"})
		return
	}
	if r.prep.lookup(p.Name) == nil && r.prep.count() >= maxSQLPrepared {
		r.fail(errorf(CodeProgramLimitExceeded, "a session may prepare at most %d statements with SQL PREPARE through pgranger", maxSQLPrepared))
		return
	}
	r.query(p.Query)
	if r.err != nil {
		return
	}
	// What is remembered: the statement with its names resolved (the
	// walk qualified them with this session's search_path, as
	// PostgreSQL resolves them at PREPARE), before any wrapper.
	resolved := proto.Clone(p).(*pg.PrepareStmt)
	text, err := deparseNode(&pg.Node{Node: &pg.Node_PrepareStmt{PrepareStmt: resolved}})
	if err != nil {
		r.fail(err)
		return
	}
	// The access checks and wrappers run now, so a PREPARE that could
	// never execute is refused at once; the rewrite itself is not sent.
	r.finish()
	if r.err != nil {
		return
	}
	argc := len(p.Argtypes)
	if m := maxParam(p.Query); m > argc {
		argc = m
	}
	r.prep.put(p.Name, &preparedSQL{text: text, orig: orig, argc: argc})
	r.views = nil
	p.Name = placeholderName(p.Name)
	p.Argtypes = nil
	p.Query = &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
		LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT, Op: pg.SetOperation_SETOP_NONE,
	}}}
	r.changed = true
}

// executeStatement replaces EXECUTE p(args) (n, at the top or inside
// EXPLAIN or CREATE TABLE AS) by the remembered statement with its
// parameters bound, and analyses that; finish is the caller's.
func (r *stmtRewriter) executeStatement(n *pg.Node) {
	e := n.GetExecuteStmt()
	r.prep.touched = true
	stored := r.prep.live(e.Name)
	if stored == nil {
		r.fail(&Error{Code: "26000", Message: "prepared statement \"" + e.Name + "\" does not exist",
			Hint: "pgranger executes with SQL EXECUTE only statements prepared with SQL PREPARE in the same session; statements prepared through the extended protocol are executed with Bind."})
		return
	}
	if len(e.Params) != stored.argc {
		r.fail(&Error{Code: CodeSyntaxError, Message: "wrong number of parameters for prepared statement \"" + e.Name + "\"",
			Detail: "Expected " + strconv.Itoa(stored.argc) + " parameters but got " + strconv.Itoa(len(e.Params)) + "."})
		return
	}
	tree, err := parse(stored.text, noLimit, noLimit)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetPrepareStmt() == nil {
		r.fail(errorf(CodeFeatureNotSupported, "the prepared statement %q cannot be read back", e.Name))
		return
	}
	p := tree.Stmts[0].Stmt.GetPrepareStmt()
	bindParams(p.Query, e.Params, p.Argtypes)
	n.Node = p.Query.Node
	r.changed = true
	r.query(n)
}

// bindParams puts args in place of $1…$n in q: each a copy, cast to its
// declared type when there is one; a bare parameter in a select list
// keeps PostgreSQL's output name for it (?column?).
func bindParams(q *pg.Node, args, types []*pg.Node) {
	walkNodes(q, func(x *pg.Node) bool {
		if rt := x.GetResTarget(); rt != nil && rt.Name == "" && rt.Val.GetParamRef() != nil {
			rt.Name = "?column?"
		}
		pr := x.GetParamRef()
		if pr == nil || pr.Number < 1 || int(pr.Number) > len(args) {
			return true
		}
		i := pr.Number - 1
		arg := proto.Clone(args[i]).(*pg.Node)
		if int(i) < len(types) && types[i].GetTypeName() != nil {
			tn := proto.Clone(types[i].GetTypeName()).(*pg.TypeName)
			x.Node = &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: arg, TypeName: tn, Location: -1}}
		} else {
			// Parenthesised by the deparser where precedence needs it.
			x.Node = arg.Node
		}
		return false // the argument is the caller's SQL, already in place
	})
}

func maxParam(n *pg.Node) int {
	m := 0
	walkNodes(n, func(x *pg.Node) bool {
		if pr := x.GetParamRef(); pr != nil && int(pr.Number) > m {
			m = int(pr.Number)
		}
		return true
	})
	return m
}

func deparseNode(n *pg.Node) (string, *Error) {
	return deparse(&pg.ParseResult{Version: parseTreeVersion, Stmts: []*pg.RawStmt{{Stmt: n}}})
}
