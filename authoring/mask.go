package authoring

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

// SECURITY LABEL FOR pgranger ON COLUMN s.t.c IS '<items>': the label is
// the column's whole mask policy, its items in order (Ranger: the first
// item that matches the user decides):
//
//	label     = item { ";" item } [ ";" ]
//	item      = MASKTYPE [ "(" expr ")" ] [ TO principal { "," principal } ]
//	principal = [ USER | GROUP | ROLE ] name | PUBLIC
//
// MASKTYPE is one of the service-def's mask types (MASK, MASK_SHOW_LAST_4,
// MASK_SHOW_FIRST_4, MASK_HASH, MASK_DATE_SHOW_YEAR in the stock hive
// def) or Ranger's own MASK_NONE, MASK_NULL and CUSTOM; only CUSTOM takes
// an expression, with {col} for the column, in the portable subset
// (expr.go). No TO means public. A name without USER, GROUP or ROLE is
// resolved like a GRANT's grantee.
//
// The policy written is the column's data-mask policy: the enabled policy
// of type data mask with exactly the column's resources (one per column:
// error 3010), whoever wrote it — its items are replaced by the label's —
// or, when the column has none, "<schema>.<table>.<column> mask". IS NULL
// deletes that policy.

type labelItem struct {
	maskType string
	expr     string // CUSTOM only, portable, with {col}
	names    []labelPrincipal
}

type labelPrincipal struct {
	kind string // "" (resolve), user, group, role
	name string
}

type maskPlan struct {
	pgName      string // schema.table.column
	db, tbl     string
	column      string
	remove      bool
	items       []labelItem
	resolved    [][]Principal
	columnNames map[string]bool
}

func (st *stmtContext) labelObject(s *pg.SecLabelStmt) (schema, table, column string, err *sqlrewrite.Error) {
	var parts []string
	for _, it := range s.Object.GetList().GetItems() {
		parts = append(parts, it.GetString_().GetSval())
	}
	switch {
	case s.Objtype == pg.ObjectType_OBJECT_COLUMN && len(parts) >= 2:
		column, parts = parts[len(parts)-1], parts[:len(parts)-1]
	case s.Objtype == pg.ObjectType_OBJECT_TABLE && len(parts) >= 1:
	default:
		return "", "", "", unsupported("SECURITY LABEL FOR %s ON %s is not supported: the labels are on columns and tables", s.Provider,
			strings.ToLower(strings.TrimPrefix(s.Objtype.String(), "OBJECT_")))
	}
	table = parts[len(parts)-1]
	if len(parts) >= 2 {
		schema = parts[len(parts)-2]
	}
	return schema, table, column, nil
}

func (st *stmtContext) maskLabel(s *pg.SecLabelStmt, label string, isNull bool) (plan, *sqlrewrite.Error) {
	if s.Objtype != pg.ObjectType_OBJECT_COLUMN {
		return nil, unsupported("SECURITY LABEL FOR pgranger goes on a column (a mask is per column); tags go with FOR pgranger_tags")
	}
	schema, table, column, err := st.labelObject(s)
	if err != nil {
		return nil, err
	}
	rel, schema, table, err := st.relation(schema, table)
	if err != nil {
		return nil, err
	}
	cols := columnsOf(rel)
	if cols != nil && !cols[column] {
		return nil, errorf(sqlstate.UndefinedColumn, "column %q of relation %q does not exist", column, table)
	}
	p := &maskPlan{pgName: schema + "." + table + "." + column, db: st.rangerDatabase(schema), tbl: table, column: column, remove: isNull, columnNames: cols}
	if isNull {
		return p, nil
	}
	if strings.TrimSpace(label) == "" {
		return nil, errorf(sqlstate.SyntaxError, "empty mask label on column %s: write the items, or IS NULL to remove the column's mask policy", p.pgName)
	}
	items, perr := parseMaskLabel(label)
	if perr != nil {
		return nil, perr
	}
	for i := range items {
		if items[i].maskType == ranger.MaskTypeCustom {
			if items[i].expr, err = st.portableCustom(items[i].expr, cols, schema+"."+table); err != nil {
				return nil, err
			}
		}
	}
	p.items = items
	return p, nil
}

// parseMaskLabel reads the label's items; the mask types are checked
// against the service-def later (authorize), when the bundle is known.
func parseMaskLabel(label string) ([]labelItem, *sqlrewrite.Error) {
	lx := &labelLexer{s: label}
	var items []labelItem
	for {
		lx.space()
		if lx.done() {
			break
		}
		typ := lx.word()
		if typ == "" {
			return nil, lx.fail("a mask type")
		}
		it := labelItem{maskType: strings.ToUpper(typ)}
		lx.space()
		if lx.peek() == '(' {
			expr, ok := lx.parens()
			if !ok {
				return nil, lx.fail("a closing parenthesis")
			}
			it.expr = expr
			lx.space()
		}
		if it.maskType == ranger.MaskTypeCustom && strings.TrimSpace(it.expr) == "" {
			return nil, errorf(sqlstate.SyntaxError, "mask label: CUSTOM needs an expression: CUSTOM(expr with {col})")
		}
		if it.maskType != ranger.MaskTypeCustom && it.expr != "" {
			return nil, errorf(sqlstate.SyntaxError, "mask label: %s takes no expression; only CUSTOM(expr) does", it.maskType)
		}
		if kw := lx.peekWord(); strings.EqualFold(kw, "TO") {
			lx.word()
			for {
				lx.space()
				pr, ok := lx.principal()
				if !ok {
					return nil, lx.fail("a user, group or role after TO")
				}
				it.names = append(it.names, pr)
				lx.space()
				if lx.peek() != ',' {
					break
				}
				lx.i++
			}
		}
		items = append(items, it)
		lx.space()
		if lx.done() {
			break
		}
		if lx.peek() != ';' {
			return nil, lx.fail("; between items")
		}
		lx.i++
	}
	if len(items) == 0 {
		return nil, errorf(sqlstate.SyntaxError, "mask label: no items; write IS NULL to remove the column's mask policy")
	}
	return items, nil
}

// labelLexer reads a security label.
type labelLexer struct {
	s string
	i int
}

func (l *labelLexer) done() bool { return l.i >= len(l.s) }

func (l *labelLexer) peek() byte {
	if l.done() {
		return 0
	}
	return l.s[l.i]
}

func (l *labelLexer) space() {
	for !l.done() && unicode.IsSpace(rune(l.s[l.i])) {
		l.i++
	}
}

func isNameByte(c byte) bool {
	return c > ' ' && !strings.ContainsRune(`,;()"'`, rune(c))
}

func (l *labelLexer) word() string {
	start := l.i
	for !l.done() && isNameByte(l.s[l.i]) {
		l.i++
	}
	return l.s[start:l.i]
}

func (l *labelLexer) peekWord() string {
	save := l.i
	w := l.word()
	l.i = save
	return w
}

// parens reads "( … )" with nested parentheses and quoted strings, and
// returns what is inside.
func (l *labelLexer) parens() (string, bool) {
	l.i++ // (
	start, depth := l.i, 1
	for !l.done() {
		switch c := l.s[l.i]; c {
		case '\'':
			l.i++
			for !l.done() {
				if l.s[l.i] == '\'' {
					if l.i+1 < len(l.s) && l.s[l.i+1] == '\'' {
						l.i += 2
						continue
					}
					break
				}
				l.i++
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				inner := l.s[start:l.i]
				l.i++
				return inner, true
			}
		}
		l.i++
	}
	return "", false
}

func (l *labelLexer) principal() (labelPrincipal, bool) {
	kind := ""
	switch w := strings.ToUpper(l.peekWord()); w {
	case "USER", "GROUP", "ROLE":
		l.word()
		l.space()
		kind = strings.ToLower(w)
	case "PUBLIC":
		l.word()
		return labelPrincipal{kind: KindGroup, name: "public"}, true
	}
	if l.peek() == '"' {
		l.i++
		var b strings.Builder
		for !l.done() {
			c := l.s[l.i]
			l.i++
			if c == '"' {
				if l.peek() == '"' {
					l.i++
					b.WriteByte('"')
					continue
				}
				return labelPrincipal{kind: kind, name: b.String()}, b.Len() > 0
			}
			b.WriteByte(c)
		}
		return labelPrincipal{}, false
	}
	name := l.word()
	return labelPrincipal{kind: kind, name: name}, name != ""
}

func (l *labelLexer) fail(want string) *sqlrewrite.Error {
	near := l.s[l.i:]
	if len(near) > 20 {
		near = near[:20] + "…"
	}
	if near == "" {
		near = "the end"
	} else {
		near = fmt.Sprintf("%q", near)
	}
	e := errorf(sqlstate.SyntaxError, "mask label: expected %s at %s (character %d of the label)", want, near, l.i+1)
	e.Hint = "A mask label is: MASKTYPE [(expr)] [TO [USER|GROUP|ROLE] name, …] { ; … }, e.g. 'MASK_NONE TO GROUP compliance; MASK_SHOW_LAST_4'"
	return e
}

func (p *maskPlan) audit(r *Result) {
	r.Resource, r.ResType, r.Access = p.db+"/"+p.tbl+"/"+p.column, "@column", "select"
}

func (p *maskPlan) lockKeys() []string {
	return []string{"mask:" + p.db + "/" + p.tbl + "/" + p.column}
}

func (p *maskPlan) authorize(x *exec) *sqlrewrite.Error {
	def := policy.StockHiveServiceDef()
	if x.bundle != nil && x.bundle.Policies != nil && x.bundle.Policies.ServiceDef != nil {
		def = x.bundle.Policies.ServiceDef
	}
	known := map[string]string{ranger.MaskTypeNone: ranger.MaskTypeNone, ranger.MaskTypeNull: ranger.MaskTypeNull, ranger.MaskTypeCustom: ranger.MaskTypeCustom}
	var names []string
	if def.DataMaskDef != nil {
		for _, mt := range def.DataMaskDef.MaskTypes {
			known[strings.ToUpper(mt.Name)] = mt.Name
			names = append(names, mt.Name)
		}
	}
	p.resolved = nil
	for i, it := range p.items {
		name, ok := known[it.maskType]
		if !ok {
			return unsupported("mask type %s is not one of the service's: %s, MASK_NONE, MASK_NULL, CUSTOM(expr)", it.maskType, strings.Join(names, ", "))
		}
		p.items[i].maskType = name
		var ps []Principal
		if len(it.names) == 0 {
			ps = []Principal{{KindGroup, "public"}}
		}
		for _, n := range it.names {
			var pr Principal
			var err *sqlrewrite.Error
			if n.kind != "" {
				pr = Principal{n.kind, n.name}
			} else if pr, err = x.dir.principal(n.name); err != nil {
				return err
			}
			ps = appendUnique(ps, pr)
		}
		p.resolved = append(p.resolved, ps)
	}
	res := policy.Resource{Database: p.db, Table: p.tbl, Column: p.column}
	if d := x.eng.Evaluate(&policy.Request{Subject: x.req.Subject, Hive: res, Accesses: []string{"select"}, At: x.now, Want: policy.WantAdmin}).Admin; !d.Allowed {
		e := adminDenied(x, "set the mask of", res, p.pgName, d)
		e.Message = fmt.Sprintf("pgranger: permission denied: user %q may not set the mask of column %s: it has no delegated admin for select there", x.user(), p.pgName)
		return e
	}
	return nil
}

func (p *maskPlan) maskItems() []ranger.RangerDataMaskPolicyItem {
	var out []ranger.RangerDataMaskPolicyItem
	for i, it := range p.items {
		users, groups, roles := split(p.resolved[i])
		info := &ranger.RangerPolicyItemDataMaskInfo{DataMaskType: it.maskType, ValueExpr: it.expr}
		out = append(out, ranger.RangerDataMaskPolicyItem{
			RangerPolicyItem: ranger.RangerPolicyItem{Users: users, Groups: groups, Roles: roles,
				Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}},
			DataMaskInfo: info,
		})
	}
	return out
}

// maskPolicy is the column's data-mask policy (exact resources), or nil.
func maskPolicy(sp *ranger.ServicePolicies, db, table, column string) *ranger.RangerPolicy {
	probe := &ranger.RangerPolicy{IsEnabled: true, PolicyType: ranger.PolicyTypeDataMask, Resources: map[string]ranger.RangerPolicyResource{
		"database": {Values: []string{db}}, "table": {Values: []string{table}}, "column": {Values: []string{column}}}}
	sig := ranger.ResourceSignature(probe)
	for i := range sp.Policies {
		q := &sp.Policies[i]
		if q.IsEnabled && q.PolicyType == ranger.PolicyTypeDataMask && ranger.ResourceSignature(q) == sig {
			return q
		}
	}
	return nil
}

func (p *maskPlan) run(ctx context.Context, x *exec) *sqlrewrite.Error {
	store := x.svc.cfg.Store
	what := "SECURITY LABEL (mask) on column " + p.pgName
	sp, err := store.Policies(ctx)
	if err != nil {
		return storeError(err, x.user(), what)
	}
	target := maskPolicy(sp, p.db, p.tbl, p.column)
	var werr error
	switch {
	case p.remove && target == nil:
		return nil // nothing to remove, as PostgreSQL's IS NULL on no label
	case p.remove:
		werr = store.Delete(ctx, target.Name)
	case target == nil:
		werr = store.Create(ctx, &ranger.RangerPolicy{
			Name:        p.pgName + " mask",
			Description: "Mask written through pgranger: SECURITY LABEL FOR pgranger ON COLUMN " + p.pgName,
			IsEnabled:   true, IsAuditEnabled: true, PolicyType: ranger.PolicyTypeDataMask, CreatedBy: x.user(), UpdatedBy: x.user(),
			Resources: map[string]ranger.RangerPolicyResource{"database": {Values: []string{p.db}}, "table": {Values: []string{p.tbl}},
				"column": {Values: []string{p.column}}},
			DataMaskPolicyItems: p.maskItems(),
		})
	default:
		up := *target
		up.DataMaskPolicyItems = p.maskItems()
		up.UpdatedBy = x.user()
		werr = store.Update(ctx, target.Name, &up)
	}
	if werr != nil {
		return storeError(werr, x.user(), what)
	}
	x.reload(ctx)
	after, err := store.Policies(ctx)
	if err != nil {
		return storeError(err, x.user(), "reading back "+what)
	}
	got := maskPolicy(after, p.db, p.tbl, p.column)
	switch {
	case p.remove && got != nil, !p.remove && (got == nil || fmt.Sprint(summarizeMasks(got.DataMaskPolicyItems)) != fmt.Sprint(summarizeMasks(p.maskItems()))):
		return withDetail(errorf(sqlstate.SerializationFailure, "could not serialize access due to concurrent update: the mask policy of column %s is not what was written", p.pgName),
			"Ranger has no optimistic concurrency: another writer replaced the policy after pgranger's write.", "Run the statement again.")
	}
	return nil
}

func summarizeMasks(items []ranger.RangerDataMaskPolicyItem) []string {
	var out []string
	for _, it := range items {
		s := strings.Join(it.Users, ",") + "|" + strings.Join(it.Groups, ",") + "|" + strings.Join(it.Roles, ",")
		if it.DataMaskInfo != nil {
			s += "|" + it.DataMaskInfo.DataMaskType + "|" + it.DataMaskInfo.ValueExpr
		}
		out = append(out, s)
	}
	return out
}
