package sqlrewrite

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
)

// Function rule (docs/security.md, "Mechanisms": Functions, and "Denied
// built-in functions"). A function outside pg_catalog
// is a Ranger udf resource (hive: database = the schema, as
// policy.namespace-mapping maps it; udf = the function's name) and needs
// `select` on it — the access Ranger's Hive plugin asks for a function a
// query uses (RangerHiveAuthorizer: a FUNCTION input of QUERY is SELECT).
// An unqualified call of a function that is not built in needs that access
// in every schema of the search_path (the backend picks among them), so
// qualifying the call is the way to need it in one. A udf runs with the
// service role's rights and can read anything that role can: granting
// udf access trusts the function like a view definition. Among built-in
// functions, those that read data or the server behind the planner's back
// are denied (the list below, with reasons, in docs/security.md). An
// unqualified built-in is always qualified with pg_catalog, so the backend
// calls exactly the function that was checked: PostgreSQL weighs the
// functions of one name from every schema of the path alike, so an
// overload elsewhere (public.lower(integer)) would win over the built-in
// for a better-matching argument even with pg_catalog searched first.

// deniedFunctions are pg_catalog functions that execute a query string,
// read files or large objects, expose or act on other sessions or the
// server, or write outside a governed statement. Each fails closed by
// name, whatever its arguments (also when an extension such as adminpack
// puts functions of these names into pg_catalog).
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
	"pg_logdir_ls":                   "it lists server files",
	"pg_current_logfile":             "it reads server files",
	"pg_hba_file_rules":              "it reads server configuration files",
	"pg_ident_file_mappings":         "it reads server configuration files",
	"pg_show_all_file_settings":      "it reads server configuration files",
	"pg_config":                      "it shows server internals",
	"pg_get_shmem_allocations":       "it shows server internals",
	"loread":                         "large objects are not governed",
	"lowrite":                        "large objects are not governed",
	"current_query":                  "it shows the rewritten statement",
	"nextval":                        "it changes a sequence, which is not a Ranger resource",
	"setval":                         "it changes a sequence, which is not a Ranger resource",
	"pg_stat_get_activity":           "it shows other sessions' statements",
	"pg_prepared_statement":          "it shows rewritten statements",
	"pg_prepared_xact":               "it shows other sessions' transactions",
	"pg_cursor":                      "it shows rewritten statements",
	"pg_lock_status":                 "it shows other sessions' activity",
	"pg_cancel_backend":              "it acts on other sessions",
	"pg_terminate_backend":           "it acts on other sessions",
	"pg_log_backend_memory_contexts": "it acts on other sessions",
	"pg_get_backend_memory_contexts": "it shows server internals",
	"pg_reload_conf":                 "it acts on the server",
	"pg_promote":                     "it acts on the server",
	"pg_switch_wal":                  "it acts on the server",
	"pg_create_restore_point":        "it acts on the server",
	"pg_backup_start":                "it acts on the server",
	"pg_backup_stop":                 "it acts on the server",
	"pg_wal_replay_pause":            "it acts on the server",
	"pg_wal_replay_resume":           "it acts on the server",
	"pg_import_system_collations":    "it changes the catalog",
	"pg_nextoid":                     "it changes the catalog",
	"pg_drop_replication_slot":       "it acts on replication",
	"brin_summarize_new_values":      "it changes an index",
	"brin_summarize_range":           "it changes an index",
	"brin_desummarize_range":         "it changes an index",
	"gin_clean_pending_list":         "it changes an index",
	"dblink":                         "it runs queries elsewhere",
}

// deniedFunctionPrefixes cover function families by name.
var deniedFunctionPrefixes = map[string]string{
	"pg_ls_":                "it lists server files",
	"lo_":                   "large objects are not governed",
	"dblink":                "it runs queries elsewhere",
	"pg_stat_get_":          "it shows other sessions' activity or row counts of governed tables",
	"pg_stat_reset":         "it changes server statistics",
	"pg_stat_statements":    "it shows other sessions' statements",
	"pg_logical_":           "it reads or writes the change stream",
	"pg_replication_slot_":  "it reads the change stream",
	"pg_replication_origin": "it acts on replication",
	"pg_create_":            "it acts on replication",
	"pg_copy_":              "it acts on replication",
	"pg_read_":              "it reads server files",
	"pg_file_":              "it reads or writes server files",
	"pg_control_":           "it shows server internals",
	"pg_rotate_logfile":     "it acts on the server",
	"binary_upgrade_":       "it changes the catalog",
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
		r.checkUDF([]string{schema}, name)
		return
	}
	if reason, denied := deniedFunctions[name]; denied {
		r.fail(denyf("function %s is not allowed through pgranger: %s (user %q)", name, reason, user))
		return
	}
	if reason, denied := deniedByPrefix(name); denied {
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

// deniedByPrefix finds the longest denied prefix of name (deterministic
// when several match).
func deniedByPrefix(name string) (string, bool) {
	best := ""
	for prefix := range deniedFunctionPrefixes {
		if strings.HasPrefix(name, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best == "" {
		return "", false
	}
	return deniedFunctionPrefixes[best], true
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
		d := eng.AccessRequest(r.sess.Subject, policy.Request{
			Resource: map[string][]string{"database": {db}, "udf": {name}},
			Access:   "select",
			At:       r.env.Now,
		})
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
