package sqlrewrite

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// protectedSettings may not be changed by clients (DESIGN §6 "Session
// settings"): the parser assumes UTF8 and standard strings, and the others
// would change whose privileges or which rows the backend applies.
var protectedSettings = map[string]bool{
	"client_encoding":             true,
	"names":                       true, // SET NAMES = client_encoding
	"standard_conforming_strings": true,
	"row_security":                true,
	"session_authorization":       true,
	"role":                        true,
}

func (r *stmtRewriter) setStatement(s *pg.VariableSetStmt) *Error {
	if s.Kind == pg.VariableSetKind_VAR_RESET_ALL {
		r.newSearchPath = r.sess.DefaultSearchPath
		return nil
	}
	// Setting names are case-insensitive in PostgreSQL: SET "Role" = 'x'
	// and SET "STANDARD_CONFORMING_STRINGS" = off change those settings.
	name := strings.ToLower(s.Name)
	if protectedSettings[name] {
		return denyf("setting %s cannot be changed through pgranger (user %q)", name, r.sess.Subject.User)
	}
	if name != "search_path" {
		return nil
	}
	if s.IsLocal {
		return errorf(CodeFeatureNotSupported, "SET LOCAL search_path is not supported through pgranger; use SET search_path")
	}
	switch s.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		path := make([]string, 0, len(s.Args))
		for _, a := range s.Args {
			c := a.GetAConst()
			if c == nil || c.GetSval() == nil {
				return errorf(CodeFeatureNotSupported, "search_path must be a list of schema names")
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
		return errorf(CodeFeatureNotSupported, "this form of SET search_path is not supported through pgranger")
	}
	if r.newSearchPath != nil {
		r.searchPath = r.newSearchPath
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
