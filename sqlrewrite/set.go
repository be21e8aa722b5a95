package sqlrewrite

import (
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
	if protectedSettings[s.Name] {
		return denyf("setting %s cannot be changed through pgranger (user %q)", s.Name, r.sess.Subject.User)
	}
	if s.Name != "search_path" {
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
