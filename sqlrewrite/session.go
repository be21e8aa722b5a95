package sqlrewrite

import (
	"maps"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Session functions (docs/security.md, "Mechanisms": Session settings;
// docs/identity.md, "Inside SQL"): the backend runs as pgranger's service
// role, so current_user & co. would name that role. In policy expressions
// they always become the authenticated user's name as a literal; in user SQL
// too unless Options.KeepSessionFunctions. Hive's session UDFs
// (current_user(), is_role_in_session('r'), current_groups(), …) become
// literals as well, so filters written for Hive work unchanged.

// sessionValue replaces CURRENT_USER, SESSION_USER, USER and CURRENT_ROLE.
func (r *stmtRewriter) sessionValue(n *pg.Node, f *pg.SQLValueFunction) {
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_SESSION_USER,
		pg.SQLValueFunctionOp_SVFOP_USER, pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
	default:
		return
	}
	if r.rw.opts.KeepSessionFunctions && !r.inPolicyExpr && r.trusted == 0 {
		return
	}
	n.Node = typedLiteral(r.sess.Subject.User, "name").Node
	r.changed = true
}

// sessionFunctionCall replaces Hive's session UDFs; it reports whether it did.
func (r *stmtRewriter) sessionFunctionCall(n *pg.Node, fc *pg.FuncCall) bool {
	if len(fc.Funcname) != 1 || (r.rw.opts.KeepSessionFunctions && !r.inPolicyExpr && r.trusted == 0) {
		return false
	}
	subj := r.sess.Subject
	switch strings.ToLower(strVal(fc.Funcname[0])) {
	case "logged_in_user", "current_user":
		if len(fc.Args) != 0 {
			return false
		}
		n.Node = typedLiteral(subj.User, "name").Node
	case "is_role_in_session":
		r.markConstDependent()
		if len(fc.Args) != 1 || fc.Args[0].GetAConst().GetSval() == nil {
			return false
		}
		want := fc.Args[0].GetAConst().GetSval().Sval
		held := false
		for _, role := range r.roles() {
			if role == want {
				held = true
			}
		}
		lit := "false"
		if held {
			lit = "true"
		}
		n.Node = typedLiteral(lit, "bool").Node
	case "current_available_roles":
		if len(fc.Args) != 0 {
			return false
		}
		n.Node = textArray(r.roles()).Node
	case "current_groups", "current_user_groups":
		if len(fc.Args) != 0 {
			return false
		}
		n.Node = textArray(sortedUnique(subj.Groups)).Node
	default:
		return false
	}
	r.changed = true
	return true
}

// roles is the identity's roles as Ranger sees them (token roles plus
// RangerRoles membership).
func (r *stmtRewriter) roles() []string {
	if eng := r.env.Policy.Engine; eng != nil {
		return eng.RolesOf(r.sess.Subject)
	}
	return sortedUnique(r.sess.Subject.Roles)
}

// targetList keeps the output column name of a bare session function
// (SELECT current_user still returns a column named current_user).
func (r *stmtRewriter) targetList(targets []*pg.Node) {
	if r.rw.opts.KeepSessionFunctions {
		return
	}
	for _, t := range targets {
		rt := t.GetResTarget()
		if rt == nil || rt.Name != "" || rt.Val == nil {
			continue
		}
		if f := rt.Val.GetSqlvalueFunction(); f != nil {
			switch f.Op {
			case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER:
				rt.Name = "current_user"
			case pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
				rt.Name = "session_user"
			case pg.SQLValueFunctionOp_SVFOP_USER:
				rt.Name = "user"
			case pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
				rt.Name = "current_role"
			}
		}
	}
}

func typeName(name string) *pg.TypeName {
	return &pg.TypeName{Names: []*pg.Node{pg.MakeStrNode("pg_catalog"), pg.MakeStrNode(name)}, Typemod: -1, Location: -1}
}

func typedLiteral(s, typ string) *pg.Node {
	return &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{
		Arg: pg.MakeAConstStrNode(s, -1), TypeName: typeName(typ), Location: -1,
	}}}
}

func textArray(items []string) *pg.Node {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	tn := typeName("text")
	tn.ArrayBounds = []*pg.Node{pg.MakeIntNode(-1)}
	return &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: pg.MakeAConstStrNode(b.String(), -1), TypeName: tn, Location: -1}}}
}

// sortedUnique: in's distinct values, sorted (a new slice).
func sortedUnique(in []string) []string { return slices.Compact(slices.Sorted(slices.Values(in))) }

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
