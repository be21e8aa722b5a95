package sqlrewrite

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
)

// Function rule (docs/security.md, "Mechanisms": Functions). A function
// outside pg_catalog is a Ranger udf resource (hive: database = the
// schema, as policy.namespace-mapping maps it; udf = the function's name)
// and needs `select` on it — the access Ranger's Hive plugin asks for a
// function a query uses (RangerHiveAuthorizer: a FUNCTION input of QUERY
// is SELECT). An unqualified call of a function that is not built in needs
// that access in every schema of the search_path (the backend picks among
// them), so qualifying the call is the way to need it in one. A udf runs
// with the service role's rights and can read anything that role can:
// granting udf access trusts the function like a view definition. A
// built-in function may be called only when it is on the allow list
// (builtins.go); the ones reviewed and refused keep their reason, and
// are refused by name even unqualified. An unqualified built-in is always
// qualified with pg_catalog, so the backend calls exactly the function
// that was checked: PostgreSQL weighs the functions of one name from
// every schema of the path alike, so an overload elsewhere
// (public.lower(integer)) would win over the built-in for a
// better-matching argument even with pg_catalog searched first.

// checkFunction applies the function rule to one call.
func (r *stmtRewriter) checkFunction(fc *pg.FuncCall) {
	names := nameList(fc.Funcname)
	if r.trusted > 0 {
		// Inside a view definition: the administrator's functions.
		if len(names) == 1 && r.snap.IsCatalogFunction(names[0]) {
			fc.Funcname = append([]*pg.Node{pg.MakeStrNode("pg_catalog")}, fc.Funcname...)
			r.changed = true
		}
		return
	}
	user := r.sess.Subject.User
	var schema, name string
	switch len(names) {
	case 1:
		name = names[0]
	case 2:
		schema, name = names[0], names[1]
	default:
		r.fail(denyf("function %s is not allowed through pgranger (user %q)", strings.Join(names, "."), user))
		return
	}
	if schema == "information_schema" && strings.HasPrefix(name, "_pg_") {
		// information_schema's own helpers (_pg_expandarray, _pg_index_position,
		// …), which JDBC's metadata queries call: built in, reading only
		// what their arguments give them.
		return
	}
	if schema != "" && schema != "pg_catalog" {
		r.checkUDF([]string{schema}, name)
		return
	}
	if reason, refused := refusedBuiltinReasons[name]; refused {
		r.fail(denyf("function %s is not allowed through pgranger: %s (user %q)", name, reason, user))
		return
	}
	if schema == "" && !r.snap.IsCatalogFunction(name) {
		// Not built in: whichever schema of the path the backend finds it
		// in, the user needs udf access there.
		var schemas []string
		for _, s := range catalog.EffectivePath(r.searchPath, user) {
			if !catalog.IsSystemSchema(s) {
				schemas = append(schemas, s)
			}
		}
		if len(schemas) == 0 {
			r.fail(denyf("function %s is not a built-in function, and the search_path names no schema it could come from (user %q)", name, user))
			return
		}
		r.checkUDF(schemas, name)
		return
	}
	if !builtinAllowed(name) {
		// Not reviewed: a function of a newer PostgreSQL, or one an
		// extension installed into pg_catalog.
		r.fail(denyf("function %s is not allowed through pgranger (user %q)", name, user))
		return
	}
	if name == "set_config" {
		r.markConstDependent()
		// A call recognised with its statement (setconfig.go) sets a
		// known setting once; search_path only there, and tracked.
		setting, recognised := r.setConfigs[fc]
		if !recognised && len(fc.Args) > 0 {
			if s := fc.Args[0].GetAConst().GetSval(); s != nil {
				setting = strings.ToLower(s.Sval)
			}
		}
		if setting == "" || setting == "search_path" && !recognised {
			r.fail(denyf("set_config on %s is not allowed through pgranger; use SET (user %q)", orUnknown(setting), user))
			return
		}
		// Every other setting follows the settings list (settings.go),
		// with the value when it is a constant.
		change := settingChange{name: setting, setConfig: true, user: user}
		if len(fc.Args) > 1 {
			change.value, change.known = settingValue(fc.Args[1])
		}
		if err := r.rw.settings.check(change); err != nil {
			r.fail(err)
			return
		}
	}
	if schema == "" {
		fc.Funcname = append([]*pg.Node{pg.MakeStrNode("pg_catalog")}, fc.Funcname...)
		r.changed = true
	}
}

// checkUDF requires Ranger select access on the udf resource name in each
// schema.
func (r *stmtRewriter) checkUDF(schemas []string, name string) {
	user := r.sess.Subject.User
	what := strings.Join(schemas, ".") + "." + name
	if len(schemas) > 1 {
		what = name
	}
	if !r.policiesUsable("function " + what) {
		return
	}
	r.governed = true
	eng := r.env.Policy.Engine
	if eng.IsSuperUser(r.sess.Subject) {
		return
	}
	for _, schema := range schemas {
		db := r.rangerDatabase(schema)
		d := eng.Evaluate(&policy.Request{
			Subject:  r.sess.Subject,
			Resource: map[string][]string{"database": {db}, "udf": {name}},
			Access:   "select",
			At:       r.env.Now,
			Want:     policy.WantAccess,
		}).Access
		if !d.Allowed {
			hint := ""
			if len(schemas) > 1 {
				hint = "Qualify the call with the function's schema: unqualified, it needs udf access in every schema of the search_path."
			}
			e := accessDenied(Denial{Database: db, UDF: name, Access: "select", PolicyID: d.PolicyID},
				"permission denied: user %q has no select access to udf %s.%s", user, schema, name)
			e.Hint = hint
			r.fail(e)
			return
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "a computed setting name"
	}
	return s
}

// checkOperator applies the function rule to an operator named with a
// schema (OPERATOR(s.op)): an operator is a call of its function, so one
// outside pg_catalog is a udf. Unqualified operators are resolved by the
// backend with pg_catalog searched first (see catalogPreceder).
func (r *stmtRewriter) checkOperator(name []*pg.Node) {
	if len(name) < 2 || r.trusted > 0 {
		return
	}
	names := nameList(name)
	if len(names) == 2 && names[0] == "pg_catalog" {
		return
	}
	r.fail(denyf("operator %s is not a built-in operator; udf access is not granted through pgranger (user %q)", strings.Join(names, "."), r.sess.Subject.User))
}

// Operator functions. An operator is a call of its function
// (pg_operator.oprcode), so the allow list applies to it too. PostgreSQL
// 15's operators all implement allowed functions
// (TestOperatorFunctionsAllowed), but an extension may put an operator
// into pg_catalog whose function is not. The rewriter sees operator
// names, so a name for which some pg_catalog operator implements a
// function that is not allowed is refused, unless its operands' types
// resolve it exactly (exprTyper.operator: where PostgreSQL's choice is
// certain) to an operator whose function is allowed.

// refusedOperatorFunction is a function, not allowed, that some pg_catalog
// operator of that name implements ("" when there is none; the
// alphabetically first when there are several, so denials are stable).
func (r *stmtRewriter) refusedOperatorFunction(name string) string {
	refused := ""
	for _, fn := range r.snap.Builtins.OperatorFunctions(name) {
		if !builtinAllowed(fn) && (refused == "" || fn < refused) {
			refused = fn
		}
	}
	return refused
}

// aexprOperators are the operator names an expression applies: its own,
// or for BETWEEN the comparisons PostgreSQL expands it into. A name
// qualified with a schema other than pg_catalog gives none (checkOperator
// refuses it).
func aexprOperators(e *pg.A_Expr) []string {
	switch e.Kind {
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		return []string{"<", "<=", ">", ">="}
	}
	if name, ok := operatorName(e.Name); ok {
		return []string{name}
	}
	return nil
}

// checkOperatorExpr applies the allow list to an operator expression. It
// reports whether the caller should walk the operands: when the name
// needs resolving, it walks them first itself, so that their column
// types are known.
func (r *stmtRewriter) checkOperatorExpr(sc *scope, e *pg.A_Expr) bool {
	if r.trusted > 0 {
		return true
	}
	var name, refused string
	for _, n := range aexprOperators(e) {
		if fn := r.refusedOperatorFunction(n); fn != "" {
			name, refused = n, fn
			break
		}
	}
	if refused == "" {
		return true
	}
	r.walkExpr(sc, e.Lexpr)
	r.walkExpr(sc, e.Rexpr)
	if r.err != nil {
		return false
	}
	user := r.sess.Subject.User
	if e.Kind == pg.A_Expr_Kind_AEXPR_OP {
		t := r.typer()
		var left typ
		if e.Lexpr != nil {
			left = t.typeOf(e.Lexpr)
		}
		if op, ok := t.operator(name, left, t.typeOf(e.Rexpr)); ok {
			if !builtinAllowed(op.Function) {
				r.fail(denyf("operator %s is not allowed through pgranger: it calls function %s, which is not allowed (user %q)", name, op.Function, user))
			}
			return false
		}
	}
	r.fail(denyf("operator %s is not allowed through pgranger: it may call function %s, which is not allowed (user %q)", name, refused, user))
	return false
}

// checkOperatorName applies the allow list to an operator named without
// operands at hand (ORDER BY … USING, op ANY (SELECT …)).
func (r *stmtRewriter) checkOperatorName(names []*pg.Node) {
	if r.trusted > 0 || len(names) == 0 {
		return
	}
	name, ok := operatorName(names)
	if !ok {
		return
	}
	if fn := r.refusedOperatorFunction(name); fn != "" {
		r.fail(denyf("operator %s is not allowed through pgranger: it may call function %s, which is not allowed (user %q)", name, fn, r.sess.Subject.User))
	}
}
