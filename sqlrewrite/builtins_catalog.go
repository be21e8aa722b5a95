package sqlrewrite

// Catalog introspection: what psql's \d commands, pgjdbc's
// DatabaseMetaData, psycopg, node-postgres, pgx, BI tools and pg_dump
// call to describe the schema. They read the system catalogs, which a
// user may query directly (docs/security.md "Catalog relations"), and
// show definitions, names and privileges — never a table's rows.

// catalogFunctions: object definitions (pg_get_*def, pg_get_expr),
// names and descriptions (format_type, obj_description, pg_describe_object,
// to_reg*), visibility on the search path (pg_*_is_visible), ACL helpers
// pg_dump uses (acldefault, aclexplode), index and relation properties,
// partition trees, sequence parameters (not values: those need select
// on the sequence), tablespaces, collation versions and the extensions
// available for CREATE EXTENSION.
var catalogFunctions = builtinFamily{"catalog introspection", []string{
	"acldefault", "aclexplode", "col_description", "format_type", "makeaclitem", "obj_description",
	"oidvectortypes", "pg_available_extension_versions", "pg_available_extensions",
	"pg_collation_actual_version", "pg_collation_for", "pg_collation_is_visible",
	"pg_column_is_updatable", "pg_conversion_is_visible", "pg_database_collation_actual_version",
	"pg_describe_object", "pg_extension_update_paths", "pg_function_is_visible",
	"pg_get_catalog_foreign_keys", "pg_get_constraintdef", "pg_get_expr",
	"pg_get_function_arg_default", "pg_get_function_arguments",
	"pg_get_function_identity_arguments", "pg_get_function_result", "pg_get_function_sqlbody",
	"pg_get_functiondef", "pg_get_indexdef", "pg_get_keywords", "pg_get_object_address",
	"pg_get_partition_constraintdef", "pg_get_partkeydef", "pg_get_publication_tables",
	"pg_get_replica_identity_index", "pg_get_ruledef", "pg_get_serial_sequence",
	"pg_get_statisticsobjdef", "pg_get_statisticsobjdef_columns",
	"pg_get_statisticsobjdef_expressions", "pg_get_triggerdef", "pg_get_userbyid",
	"pg_get_viewdef", "pg_identify_object", "pg_identify_object_as_address",
	"pg_index_column_has_property", "pg_index_has_property", "pg_indexam_has_property",
	"pg_is_other_temp_schema", "pg_my_temp_schema", "pg_opclass_is_visible",
	"pg_operator_is_visible", "pg_opfamily_is_visible", "pg_options_to_table",
	"pg_partition_ancestors", "pg_partition_root", "pg_partition_tree",
	"pg_relation_is_publishable", "pg_relation_is_updatable", "pg_sequence_parameters",
	"pg_statistics_obj_is_visible", "pg_table_is_visible", "pg_tablespace_databases",
	"pg_tablespace_location", "pg_ts_config_is_visible", "pg_ts_dict_is_visible",
	"pg_ts_parser_is_visible", "pg_ts_template_is_visible", "pg_type_is_visible", "pg_typeof",
	"satisfies_hash_partition", "shobj_description", "to_regclass", "to_regcollation",
	"to_regnamespace", "to_regoper", "to_regoperator", "to_regproc", "to_regprocedure",
	"to_regrole", "to_regtype",
}}

// privilegeFunctions: has_*_privilege, pg_has_role and
// row_security_active. They answer for the role named, which through
// pgranger is the service role unless another is named: the database's
// grants, not Ranger's policies.
var privilegeFunctions = builtinFamily{"privileges", []string{
	"has_any_column_privilege", "has_column_privilege", "has_database_privilege",
	"has_foreign_data_wrapper_privilege", "has_function_privilege", "has_language_privilege",
	"has_parameter_privilege", "has_schema_privilege", "has_sequence_privilege",
	"has_server_privilege", "has_table_privilege", "has_tablespace_privilege",
	"has_type_privilege", "pg_has_role", "row_security_active",
}}
