package sqlrewrite

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Function rule (DESIGN §6 "Functions"): only built-in functions
// (pg_catalog) may be called from user SQL, and among them not those that
// read data or the server behind the planner's back. A function outside
// pg_catalog is a Ranger `udf` resource; pgranger does not grant udf access
// yet, so such calls are denied. An unqualified name is always qualified
// with pg_catalog, so the backend calls exactly the function that was
// checked: PostgreSQL weighs the functions of one name from every schema of
// the path alike, so an overload elsewhere (public.lower(integer)) would
// win over the built-in for a better-matching argument even with pg_catalog
// searched first.

// deniedFunctions are pg_catalog functions that execute a query string,
// read files or large objects, or expose other sessions. Each fails closed
// by name, whatever its arguments.
var deniedFunctions = map[string]string{
	"query_to_xml":                   "it runs a query string",
	"query_to_xml_and_xmlschema":     "it runs a query string",
	"query_to_xmlschema":             "it runs a query string",
	"table_to_xml":                   "it reads a table unchecked",
	"table_to_xml_and_xmlschema":     "it reads a table unchecked",
	"table_to_xmlschema":             "it reads a table unchecked",
	"cursor_to_xml":                  "it reads a cursor unchecked",
	"cursor_to_xmlschema":            "it reads a cursor unchecked",
	"schema_to_xml":                  "it reads a schema unchecked",
	"schema_to_xml_and_xmlschema":    "it reads a schema unchecked",
	"schema_to_xmlschema":            "it reads a schema unchecked",
	"database_to_xml":                "it reads a database unchecked",
	"database_to_xml_and_xmlschema":  "it reads a database unchecked",
	"database_to_xmlschema":          "it reads a database unchecked",
	"ts_stat":                        "it runs a query string",
	"ts_rewrite":                     "it can run a query string",
	"pg_read_file":                   "it reads server files",
	"pg_read_binary_file":            "it reads server files",
	"pg_stat_file":                   "it reads server files",
	"pg_file_write":                  "it writes server files",
	"loread":                         "large objects are not governed",
	"lowrite":                        "large objects are not governed",
	"current_query":                  "it shows the rewritten statement",
	"nextval":                        "it changes a sequence (update access is not granted through pgranger yet)",
	"setval":                         "it changes a sequence (update access is not granted through pgranger yet)",
	"pg_stat_get_activity":           "it shows other sessions' statements",
	"pg_prepared_statement":          "it shows rewritten statements",
	"pg_cursor":                      "it shows rewritten statements",
	"pg_cancel_backend":              "it acts on other sessions",
	"pg_terminate_backend":           "it acts on other sessions",
	"pg_get_backend_memory_contexts": "it shows server internals",
	"dblink":                         "it runs queries elsewhere",
}

// deniedFunctionPrefixes cover function families by name.
var deniedFunctionPrefixes = map[string]string{
	"pg_ls_":               "it lists server files",
	"lo_":                  "large objects are not governed",
	"dblink":               "it runs queries elsewhere",
	"pg_stat_get_backend_": "it shows other sessions",
	"pg_stat_statements":   "it shows other sessions' statements",
	"pg_logical_slot_":     "it reads the change stream",
	"pg_replication_slot_": "it reads the change stream",
	"pg_read_":             "it reads server files",
}

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
		r.fail(denyf("function %s.%s is a udf resource; udf access is not granted through pgranger (user %q)", schema, name, user))
		return
	}
	if schema == "" && !r.snap.IsCatalogFunction(name) {
		r.fail(denyf("function %s is not a built-in function; udf access is not granted through pgranger (user %q)", name, user))
		return
	}
	if reason, denied := deniedFunctions[name]; denied {
		r.fail(denyf("function %s is not allowed through pgranger: %s (user %q)", name, reason, user))
		return
	}
	for prefix, reason := range deniedFunctionPrefixes {
		if strings.HasPrefix(name, prefix) {
			r.fail(denyf("function %s is not allowed through pgranger: %s (user %q)", name, reason, user))
			return
		}
	}
	if name == "set_config" {
		var setting string
		if len(fc.Args) > 0 {
			if s := fc.Args[0].GetAConst().GetSval(); s != nil {
				setting = strings.ToLower(s.Sval)
			}
		}
		if setting == "" || setting == "search_path" || protectedSettings[setting] {
			r.fail(denyf("set_config on %s is not allowed through pgranger; use SET (user %q)", orUnknown(setting), user))
			return
		}
	}
	if schema == "" {
		fc.Funcname = append([]*pg.Node{pg.MakeStrNode("pg_catalog")}, fc.Funcname...)
		r.changed = true
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
