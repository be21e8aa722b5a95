package sqlrewrite

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// protectedSettings may not be changed by clients (docs/security.md
// "Session settings"): the parser assumes UTF8 and standard strings, and
// the others would change whose privileges the backend applies.
// row_security is not among them: off only makes PostgreSQL raise an
// error where its own row-level security would filter a read, and has no
// effect on a role that bypasses it; pg_dump sets it (docs/decisions.md "pg_dump").
var protectedSettings = map[string]bool{
	"client_encoding":             true,
	"names":                       true, // SET NAMES = client_encoding
	"standard_conforming_strings": true,
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
	if protectedSettings[name] && !keepsSessionValue(name, s) {
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

// keepsSessionValue reports whether s sets a protected setting to the
// value pgranger's backend sessions already run with: client_encoding
// UTF8 (pg_dump's parallel workers, and psql running a dump, set it) and
// standard_conforming_strings on. Such a SET changes nothing.
func keepsSessionValue(name string, s *pg.VariableSetStmt) bool {
	if s.Kind != pg.VariableSetKind_VAR_SET_VALUE || len(s.Args) != 1 {
		return false
	}
	v, ok := constString(s.Args[0])
	if !ok {
		return false
	}
	switch name {
	case "client_encoding", "names":
		// PostgreSQL compares encoding names lower-cased, ignoring
		// everything but letters and digits (clean_encoding_name).
		clean := strings.Map(func(c rune) rune {
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
				return c
			case c >= 'A' && c <= 'Z':
				return c + 'a' - 'A'
			}
			return -1
		}, v)
		return clean == "utf8" || clean == "unicode"
	case "standard_conforming_strings":
		return strings.EqualFold(v, "on") || strings.EqualFold(v, "true")
	}
	return false
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
