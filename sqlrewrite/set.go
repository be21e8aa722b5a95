package sqlrewrite

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pgranger/pgranger/sqlstate"
)

// setStatement checks SET, SET LOCAL, RESET and SET … TO DEFAULT against
// the settings list (settings.go) and tracks search_path.
func (r *stmtRewriter) setStatement(s *pg.VariableSetStmt) *Error {
	user := r.sess.Subject.User
	switch s.Kind {
	case pg.VariableSetKind_VAR_RESET_ALL:
		// Back to the session's defaults: nothing a client chose. Settings
		// pgranger keeps are reset to the values its backend sessions
		// start with (client_encoding, standard_conforming_strings), and
		// PostgreSQL leaves role and session_authorization alone.
		r.newSearchPath = r.sess.DefaultSearchPath
		return nil
	case pg.VariableSetKind_VAR_SET_MULTI:
		return r.setMulti(s)
	}
	// Setting names are case-insensitive in PostgreSQL: SET "Role" = 'x'
	// and SET "STANDARD_CONFORMING_STRINGS" = off change those settings.
	name := strings.ToLower(s.Name)
	change := settingChange{name: name, user: user}
	switch s.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		if len(s.Args) == 1 {
			// The decision reads the value: a template with it as a
			// parameter would not parse anyway (template.go).
			r.markConstDependent()
			change.value, change.known = settingValue(s.Args[0])
		}
	default: // DEFAULT, RESET, FROM CURRENT
		change.reset = true
	}
	if err := r.rw.settings.check(change); err != nil {
		return err
	}
	if name != "search_path" {
		return nil
	}
	if s.IsLocal {
		return errorf(sqlstate.FeatureNotSupported, "SET LOCAL search_path is not supported through pgranger; use SET search_path")
	}
	switch s.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		path := make([]string, 0, len(s.Args))
		for _, a := range s.Args {
			c := a.GetAConst()
			if c == nil || c.GetSval() == nil {
				return errorf(sqlstate.FeatureNotSupported, "search_path must be a list of schema names")
			}
			path = append(path, c.GetSval().Sval)
		}
		if before := catalogPreceder(path); before != "" {
			return denyf("a search_path that puts pg_catalog after %s is not allowed through pgranger (user %q)", QuoteIdent(before), r.sess.Subject.User)
		}
		r.newSearchPath = path
	case pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		r.newSearchPath = r.sess.DefaultSearchPath
	case pg.VariableSetKind_VAR_SET_CURRENT:
	default:
		return errorf(sqlstate.FeatureNotSupported, "this form of SET search_path is not supported through pgranger")
	}
	if r.newSearchPath != nil {
		r.searchPath = r.newSearchPath
	}
	return nil
}

// setMulti checks the statements PostgreSQL's grammar gives several
// settings at once: SET TRANSACTION … and SET SESSION CHARACTERISTICS AS
// TRANSACTION … set transaction_* and default_transaction_* (each is
// checked against the list by that name); SET TRANSACTION SNAPSHOT
// imports the snapshot of another transaction (pg_dump -j), in which
// every read is checked as in any other.
func (r *stmtRewriter) setMulti(s *pg.VariableSetStmt) *Error {
	prefix := ""
	switch s.Name {
	case "TRANSACTION SNAPSHOT":
		return nil
	case "TRANSACTION":
	case "SESSION CHARACTERISTICS":
		prefix = "default_"
	default:
		return r.rw.settings.check(settingChange{name: strings.ToLower(s.Name), user: r.sess.Subject.User})
	}
	for _, a := range s.Args {
		d := a.GetDefElem()
		if d == nil {
			return denyf("this form of SET %s is not allowed through pgranger (user %q)", s.Name, r.sess.Subject.User)
		}
		if err := r.rw.settings.check(settingChange{name: prefix + d.Defname, user: r.sess.Subject.User}); err != nil {
			return err
		}
	}
	return nil
}

// catalogPreceder returns the schema a search_path names before
// pg_catalog, "" when pg_catalog comes first or is not named (then
// PostgreSQL searches it first). Only pg_temp, which holds nothing a
// pgranger session can create, may precede it. With pg_catalog first,
// built-in relations, operators and types win over any others of the same
// name and argument types whichever path the backend really has: pgranger's
// copy of the path can lag behind the backend's (a SET rolled back with its
// transaction), and operators in row filters and user SQL are resolved by
// the backend.
func catalogPreceder(path []string) string {
	first := ""
	for _, p := range path {
		switch {
		case p == "pg_catalog":
			return first
		case p != "pg_temp" && first == "":
			first = p
		}
	}
	return ""
}
