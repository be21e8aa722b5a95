package sqlrewrite

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pgranger/pgranger/sqlstate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
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
// the remembered statement with its parameters bound to the arguments
// (bindParams: each argument a value computed once, in no table's scope,
// converted to the declared type), analysed and rewritten under the
// policy in force at that moment, so it can never run under an older
// policy. DEALLOCATE p drops it (and the placeholder); DEALLOCATE ALL and
// DISCARD ALL drop them all. EXECUTE of a name pgranger did not see
// prepared with SQL PREPARE in this session — a statement prepared
// through the extended protocol — is refused, since it would skip the
// re-check.
//
// Differences from PostgreSQL (docs/security.md, "SQL PREPARE / EXECUTE"):
// errors that PREPARE would report during parse analysis (an unknown
// column) come at EXECUTE; an aggregate, window or set-returning function
// in an argument is refused with PostgreSQL's SQLSTATE but a message
// naming VALUES; an argument is converted with an explicit cast where
// PostgreSQL applies an assignment cast; an argument the statement never
// reads is not computed; a parameter without a declared type takes the
// argument's type; the plan is not cached.

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
		r.fail(errorf(sqlstate.FeatureNotSupported, "PREPARE without a statement"))
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
		r.fail(&Error{Code: sqlstate.DuplicatePreparedStatement, Message: "prepared statement \"" + p.Name + "\" already exists"})
		return
	}
	if r.prep.lookup(p.Name) == nil && r.prep.count() >= maxSQLPrepared {
		r.fail(errorf(sqlstate.ProgramLimitExceeded, "a session may prepare at most %d statements with SQL PREPARE through pgranger", maxSQLPrepared))
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
		r.fail(&Error{Code: sqlstate.InvalidSQLStatementName, Message: "prepared statement \"" + e.Name + "\" does not exist",
			Hint: "pgranger executes with SQL EXECUTE only statements prepared with SQL PREPARE in the same session; statements prepared through the extended protocol are executed with Bind."})
		return
	}
	if len(e.Params) != stored.argc {
		r.fail(&Error{Code: sqlstate.SyntaxError, Message: "wrong number of parameters for prepared statement \"" + e.Name + "\"",
			Detail: "Expected " + strconv.Itoa(stored.argc) + " parameters but got " + strconv.Itoa(len(e.Params)) + "."})
		return
	}
	for _, arg := range e.Params {
		if err := r.checkExecuteArg(arg); err != nil {
			r.fail(err)
			return
		}
	}
	tree, err := parse(stored.text, noLimit, noLimit)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetPrepareStmt() == nil {
		r.fail(errorf(sqlstate.FeatureNotSupported, "the prepared statement %q cannot be read back", e.Name))
		return
	}
	p := tree.Stmts[0].Stmt.GetPrepareStmt()
	if !bindParams(p.Query, e.Params, p.Argtypes) {
		r.fail(errorf(sqlstate.FeatureNotSupported, "the arguments of prepared statement %q cannot be placed in it", e.Name))
		return
	}
	n.Node = p.Query.Node
	r.changed = true
	r.query(n)
}

// checkExecuteArg refuses what PostgreSQL refuses in an EXECUTE argument
// before evaluating it, with PostgreSQL's error: an argument is a value
// computed in no table's scope (transformExpr with an empty range table),
// so a column reference names nothing, and subqueries and parameters are
// not allowed. The first offending node in PostgreSQL's order of analysis
// (a node before what is inside it, operands and arguments left to right)
// is reported. Aggregates, window and set-returning functions are refused
// by PostgreSQL where the argument is evaluated (bindParams).
func (r *stmtRewriter) checkExecuteArg(arg *pg.Node) *Error {
	var found *Error
	var visit func(x *pg.Node) bool
	visit = func(x *pg.Node) bool {
		if found != nil {
			return false
		}
		switch v := x.Node.(type) {
		case *pg.Node_TypeCast:
			// A type's modifiers may be identifiers (geometry(Point)),
			// which are no column references.
			walkNodes(v.TypeCast.Arg, visit)
			return false
		case *pg.Node_XmlSerialize:
			walkNodes(v.XmlSerialize.Expr, visit)
			return false
		case *pg.Node_SubLink:
			found = &Error{Code: sqlstate.FeatureNotSupported, Message: "cannot use subquery in EXECUTE parameter", Position: v.SubLink.Location + 1}
		case *pg.Node_ParamRef:
			found = &Error{Code: sqlstate.UndefinedParameter, Message: "there is no parameter $" + strconv.Itoa(int(v.ParamRef.Number)), Position: v.ParamRef.Location + 1}
		case *pg.Node_ColumnRef:
			found = r.missingColumnError(v.ColumnRef)
		}
		return found == nil
	}
	walkNodes(arg, visit)
	return found
}

// missingColumnError is PostgreSQL's error for a column reference that
// finds no range-table entry (transformColumnRef).
func (r *stmtRewriter) missingColumnError(cr *pg.ColumnRef) *Error {
	names := make([]string, len(cr.Fields))
	for i, f := range cr.Fields {
		names[i] = strVal(f)
		if f.GetAStar() != nil {
			names[i] = "*"
		}
	}
	pos := cr.Location + 1
	missingTable := func(name string) *Error {
		return &Error{Code: sqlstate.UndefinedTable, Message: "missing FROM-clause entry for table \"" + name + "\"", Position: pos}
	}
	switch len(names) {
	case 1:
		return &Error{Code: sqlstate.UndefinedColumn, Message: "column \"" + names[0] + "\" does not exist", Position: pos}
	case 2:
		return missingTable(names[0])
	case 3:
		return missingTable(names[1])
	case 4:
		if names[0] != r.sess.Database {
			return &Error{Code: sqlstate.FeatureNotSupported, Message: "cross-database references are not implemented: " + strings.Join(names, "."), Position: pos}
		}
		return missingTable(names[2])
	}
	return &Error{Code: sqlstate.SyntaxError, Message: "improper qualified name (too many dotted names): " + strings.Join(names, "."), Position: pos}
}

// bindParams puts the arguments of EXECUTE in place of $1…$n in q, each
// converted to its parameter's declared type (PostgreSQL drops a declared
// type's modifiers: PREPARE p(varchar(3)) takes any varchar). A constant
// (a literal, a cast of one, an array of those) stands in place of its
// parameter. Any other argument is evaluated once, apart from the
// statement, as PostgreSQL evaluates EXECUTE's arguments: in a CTE of q,
//
//	WITH pgranger_args (k, a2) AS MATERIALIZED (VALUES (true, <arg 2>), (false, NULL)) …
//
// whose VALUES has no FROM (a column reference names nothing there) and
// two rows (PostgreSQL refuses aggregates, window and set-returning
// functions in a VALUES list of several rows), and each use of the
// parameter reads the value: (SELECT a2 FROM pgranger_args WHERE k), an
// uncorrelated subquery, which reads the materialized CTE. The argument
// is then checked by the same rules as any expression of the statement.
// A bare parameter in a select list keeps PostgreSQL's output name for it
// (?column?). It reports false when it cannot place the CTE.
func bindParams(q *pg.Node, args, types []*pg.Node) bool {
	inline := make([]*pg.Node, len(args)) // the argument, converted
	column := make([]string, len(args))   // its CTE column, if computed there
	var values []*pg.Node
	colnames := []*pg.Node{pg.MakeStrNode("k")}
	first, second := []*pg.Node{boolConst(true)}, []*pg.Node{boolConst(false)}
	for i, arg := range args {
		v := proto.Clone(arg).(*pg.Node)
		if i < len(types) && types[i].GetTypeName() != nil {
			v = &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: v, TypeName: paramType(types[i].GetTypeName()), Location: -1}}}
		}
		inline[i] = v
		if constantArg(arg) {
			continue
		}
		col := "a" + strconv.Itoa(i+1)
		colnames = append(colnames, pg.MakeStrNode(col))
		first = append(first, v)
		second = append(second, &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Isnull: true, Location: -1}}})
		column[i] = col
	}
	if len(colnames) > 1 {
		values = []*pg.Node{pg.MakeListNode(first), pg.MakeListNode(second)}
	}
	name := argsCTEName(q)
	// PostgreSQL refuses a subquery in ON CONFLICT's index inference
	// (an index expression or predicate, where aggregates and set-returning
	// functions are refused too): there the argument itself stands.
	if ins := q.GetInsertStmt(); ins != nil && ins.OnConflictClause != nil && ins.OnConflictClause.Infer != nil {
		replaceParams(ins.OnConflictClause.Infer, len(args), func(i int) *pg.Node { return proto.Clone(inline[i]).(*pg.Node) })
	}
	replaceParams(q, len(args), func(i int) *pg.Node {
		if column[i] == "" {
			return proto.Clone(inline[i]).(*pg.Node)
		}
		return argRef(name, column[i])
	})
	if values == nil {
		return true
	}
	cte := &pg.Node{Node: &pg.Node_CommonTableExpr{CommonTableExpr: &pg.CommonTableExpr{
		Ctename:         name,
		Aliascolnames:   colnames,
		Ctematerialized: pg.CTEMaterialize_CTEMaterializeAlways,
		Ctequery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
			ValuesLists: values, LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT, Op: pg.SetOperation_SETOP_NONE,
		}}},
		Location: -1,
	}}}
	var with **pg.WithClause
	switch v := q.Node.(type) {
	case *pg.Node_SelectStmt:
		with = &v.SelectStmt.WithClause
	case *pg.Node_InsertStmt:
		with = &v.InsertStmt.WithClause
	case *pg.Node_UpdateStmt:
		with = &v.UpdateStmt.WithClause
	case *pg.Node_DeleteStmt:
		with = &v.DeleteStmt.WithClause
	case *pg.Node_MergeStmt:
		with = &v.MergeStmt.WithClause
	default:
		return false
	}
	if *with == nil {
		*with = &pg.WithClause{Location: -1}
	}
	// First: every CTE of the statement may use a parameter.
	(*with).Ctes = append([]*pg.Node{cte}, (*with).Ctes...)
	return true
}

// replaceParams replaces each $i (i ≤ n) in m by with(i-1), and names a
// bare parameter of a select list ?column?, as PostgreSQL does.
func replaceParams(m protoreflect.ProtoMessage, n int, with func(i int) *pg.Node) {
	walkNodes(m, func(x *pg.Node) bool {
		if rt := x.GetResTarget(); rt != nil && rt.Name == "" && rt.Val.GetParamRef() != nil {
			rt.Name = "?column?"
		}
		pr := x.GetParamRef()
		if pr == nil || pr.Number < 1 || int(pr.Number) > n {
			return true
		}
		x.Node = with(int(pr.Number) - 1).Node
		return false // the argument is the caller's SQL, already in place
	})
}

// argRef reads an evaluated argument: (SELECT col FROM cte WHERE k).
func argRef(cte, col string) *pg.Node {
	sel := &pg.SelectStmt{
		TargetList:  []*pg.Node{pg.MakeResTargetNodeWithVal(pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(col)}, -1), -1)},
		FromClause:  []*pg.Node{pg.MakeSimpleRangeVarNode(cte, -1)},
		WhereClause: pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode("k")}, -1),
		LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT,
		Op:          pg.SetOperation_SETOP_NONE,
	}
	return &pg.Node{Node: &pg.Node_SubLink{SubLink: &pg.SubLink{
		SubLinkType: pg.SubLinkType_EXPR_SUBLINK,
		Subselect:   &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}},
		Location:    -1,
	}}}
}

// argsCTEName is a name for the arguments' CTE that no relation or CTE
// of q is named, so that it shadows nothing.
func argsCTEName(q *pg.Node) string {
	used := map[string]bool{}
	walkNodes(q, func(x *pg.Node) bool {
		switch v := x.Node.(type) {
		case *pg.Node_RangeVar:
			used[v.RangeVar.Relname] = true
		case *pg.Node_CommonTableExpr:
			used[v.CommonTableExpr.Ctename] = true
		}
		return true
	})
	name := "pgranger_args"
	for i := 2; used[name]; i++ {
		name = "pgranger_args_" + strconv.Itoa(i)
	}
	return name
}

// constantArg reports whether an EXECUTE argument is a constant: a
// literal, a cast of one, or an ARRAY[…] of those. Its value is the same
// wherever it is written, so it stands in place of its parameter (where
// the planner sees a constant, as it sees PostgreSQL's parameter value).
func constantArg(n *pg.Node) bool {
	switch v := n.Node.(type) {
	case *pg.Node_AConst:
		return true
	case *pg.Node_TypeCast:
		return constantArg(v.TypeCast.Arg)
	case *pg.Node_AArrayExpr:
		for _, e := range v.AArrayExpr.Elements {
			if !constantArg(e) {
				return false
			}
		}
		return true
	}
	return false
}

// paramType is a declared parameter type as PostgreSQL uses it: without
// modifiers. CHAR's bare name would mean char(1), so bpchar stays bpchar.
func paramType(tn *pg.TypeName) *pg.TypeName {
	t := proto.Clone(tn).(*pg.TypeName)
	t.Typmods = nil
	t.Typemod = -1
	if names := nameList(t.Names); len(names) == 2 && names[0] == "pg_catalog" && names[1] == "bpchar" {
		t.Names = []*pg.Node{pg.MakeStrNode("bpchar")}
	}
	return t
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
