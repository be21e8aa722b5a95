package sqlrewrite

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pgranger/pgranger/sqlstate"
)

// set_config is a function, so it can run anywhere in a query — once, per
// row, or not at all — and with a computed setting name; checkFunction
// holds it to the settings list (settings.go) and denies it on
// search_path, whose value pgranger must know. Two statements that pg_dump
// sends are recognised whole, because in them pgranger knows exactly what
// is set and that it is set once:
//
//	SELECT pg_catalog.set_config('search_path', '<path>', false)
//	SELECT set_config(name, '<value>', false) FROM pg_settings WHERE name = '<setting>'
//
// The first is SET search_path under the same rules (setStatement),
// tracked like it; the second is set_config('<setting>', …) for the one
// setting the WHERE names, and goes through checkFunction's rule with that
// name (docs/clients.md "pg_dump: a masked dump"; docs/decisions.md "pg_dump").
func (r *stmtRewriter) recogniseSetConfig(sel *pg.SelectStmt) *Error {
	if !bareSelect(sel) || len(sel.TargetList) != 1 {
		return nil
	}
	fc := setConfigCall(sel.TargetList[0])
	if fc == nil {
		return nil
	}
	switch len(sel.FromClause) {
	case 0:
		setting, ok := constString(fc.Args[0])
		if !ok || strings.ToLower(setting) != "search_path" || sel.WhereClause != nil {
			return nil
		}
		return r.setConfigSearchPath(fc)
	case 1:
		if setting, ok := r.pgSettingsRow(sel); ok && isColumn(fc.Args[0], "name", sel.FromClause[0].GetRangeVar()) && setting != "search_path" {
			r.knowSetting(fc, setting)
		}
	}
	return nil
}

// knowSetting records the setting a recognised set_config call sets.
func (r *stmtRewriter) knowSetting(fc *pg.FuncCall, setting string) {
	if r.setConfigs == nil {
		r.setConfigs = map[*pg.FuncCall]string{}
	}
	r.setConfigs[fc] = setting
}

// setConfigSearchPath applies SELECT set_config('search_path', v, local):
// v is the setting's raw text, a list of identifiers as in
// postgresql.conf.
func (r *stmtRewriter) setConfigSearchPath(fc *pg.FuncCall) *Error {
	value, ok := constString(fc.Args[1])
	local, isBool := constBool(fc.Args[2])
	if !ok || !isBool {
		return nil // not constants: checkFunction denies the call
	}
	if local {
		return errorf(sqlstate.FeatureNotSupported, "set_config('search_path', …, true) is not supported through pgranger; use set_config('search_path', …, false) or SET search_path")
	}
	path, err := splitIdentifierList(value)
	if err != "" {
		return denyf("set_config on search_path with an unreadable value (%s) is not allowed through pgranger (user %q)", err, r.sess.Subject.User)
	}
	if before := catalogPreceder(path); before != "" {
		return denyf("a search_path that puts pg_catalog after %s is not allowed through pgranger (user %q)", QuoteIdent(before), r.sess.Subject.User)
	}
	r.markConstDependent()
	r.knowSetting(fc, "search_path")
	r.newSearchPath = path
	return nil
}

// pgSettingsRow matches FROM pg_catalog.pg_settings WHERE name = '<setting>'
// and returns the setting, lower-cased as PostgreSQL compares names.
func (r *stmtRewriter) pgSettingsRow(sel *pg.SelectStmt) (string, bool) {
	rv := sel.FromClause[0].GetRangeVar()
	if rv == nil || rv.Relname != "pg_settings" || rv.Catalogname != "" || !rv.Inh {
		return "", false
	}
	if rv.Schemaname == "" {
		rel, ok := r.snap.Resolve(rv.Relname, r.searchPath, r.sess.Subject.User)
		if !ok || rel.Schema != "pg_catalog" {
			return "", false
		}
	} else if rv.Schemaname != "pg_catalog" {
		return "", false
	}
	e := sel.WhereClause.GetAExpr()
	if e == nil || e.Kind != pg.A_Expr_Kind_AEXPR_OP || !isEqualsOperator(e.Name) || !isColumn(e.Lexpr, "name", rv) {
		return "", false
	}
	setting, ok := constString(e.Rexpr)
	if !ok || setting == "" {
		return "", false
	}
	return strings.ToLower(setting), true
}

// bareSelect is a SELECT with a target list, at most a FROM and a WHERE:
// nothing that could run the target list more or less than once per row
// the WHERE keeps.
func bareSelect(s *pg.SelectStmt) bool {
	return s != nil && s.Op == pg.SetOperation_SETOP_NONE && s.WithClause == nil && s.IntoClause == nil &&
		len(s.DistinctClause) == 0 && len(s.GroupClause) == 0 && s.HavingClause == nil &&
		len(s.WindowClause) == 0 && len(s.ValuesLists) == 0 && len(s.SortClause) == 0 &&
		s.LimitCount == nil && s.LimitOffset == nil && len(s.LockingClause) == 0
}

// setConfigCall returns the target's set_config(a, b, c) call, plain: no
// named or variadic arguments, no aggregate or window decoration.
func setConfigCall(target *pg.Node) *pg.FuncCall {
	rt := target.GetResTarget()
	if rt == nil {
		return nil
	}
	fc := rt.Val.GetFuncCall()
	if fc == nil || len(fc.Args) != 3 || fc.AggStar || fc.AggDistinct || fc.FuncVariadic || fc.Over != nil ||
		fc.AggFilter != nil || len(fc.AggOrder) != 0 || fc.AggWithinGroup {
		return nil
	}
	names := nameList(fc.Funcname)
	if len(names) == 2 && names[0] != "pg_catalog" || len(names) > 2 || names[len(names)-1] != "set_config" {
		return nil
	}
	return fc
}

func constString(n *pg.Node) (string, bool) {
	c := n.GetAConst()
	if c == nil || c.GetSval() == nil {
		return "", false
	}
	return c.GetSval().Sval, true
}

func constBool(n *pg.Node) (value, ok bool) {
	c := n.GetAConst()
	if c == nil || c.GetBoolval() == nil {
		return false, false
	}
	return c.GetBoolval().Boolval, true
}

// isColumn reports whether n is a reference to column col of the FROM
// item rv, bare or qualified with its visible name.
func isColumn(n *pg.Node, col string, rv *pg.RangeVar) bool {
	cr := n.GetColumnRef()
	if cr == nil || rv == nil {
		return false
	}
	names := nameList(cr.Fields)
	switch len(names) {
	case 1:
		return names[0] == col
	case 2:
		visible := rv.Relname
		if rv.Alias != nil {
			visible = rv.Alias.Aliasname
		}
		return names[0] == visible && names[1] == col
	}
	return false
}

// isEqualsOperator is = or OPERATOR(pg_catalog.=); an unqualified
// operator resolves in pg_catalog first (catalogPreceder).
func isEqualsOperator(name []*pg.Node) bool {
	names := nameList(name)
	return len(names) == 1 && names[0] == "=" || len(names) == 2 && names[0] == "pg_catalog" && names[1] == "="
}

// splitIdentifierList splits a list setting's raw text as PostgreSQL's
// SplitIdentifierString does for search_path: comma-separated
// identifiers, double-quoted ones kept as written ("" is a quote),
// others lower-cased. Anything PostgreSQL would reject or truncate (a
// name over 63 bytes), and an empty quoted name, returns a reason
// instead: pgranger must read the same path the backend will use.
func splitIdentifierList(s string) ([]string, string) {
	const maxIdent = 63
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' } // scanner_isspace
	path := []string{}
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i == len(s) {
		return path, "" // an empty list
	}
	for {
		var name strings.Builder
		if s[i] == '"' {
			i++
			for {
				if i == len(s) {
					return nil, "an unterminated quoted name"
				}
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						name.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				name.WriteByte(s[i])
				i++
			}
			if name.Len() == 0 {
				return nil, "an empty quoted name"
			}
		} else {
			for i < len(s) && s[i] != ',' && !isSpace(s[i]) {
				// Only ASCII letters fold: the backend's encoding is
				// UTF8 (pgwire refuses others), where
				// downcase_identifier leaves other bytes alone.
				c := s[i]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				name.WriteByte(c)
				i++
			}
			if name.Len() == 0 {
				return nil, "an empty name"
			}
		}
		if name.Len() > maxIdent {
			return nil, "a name longer than 63 bytes"
		}
		path = append(path, name.String())
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return path, ""
		}
		if s[i] != ',' {
			return nil, "a name followed by something other than a comma"
		}
		i++
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return nil, "a trailing comma"
		}
	}
}
