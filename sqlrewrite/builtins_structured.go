package sqlrewrite

// Structured values: enums, ranges, arrays, JSON and XML. Each function
// here takes a value apart or builds one from its arguments; none reads a
// relation. The XML functions that do (query_to_xml, table_to_xml, …)
// are refused in builtins_refused.go.

// rangeFunctions: range and multirange constructors and accessors, and
// the enum helpers (enum_range lists an enum type's labels, as pg_enum
// does).
var rangeFunctions = builtinFamily{"enum and range", []string{
	"daterange", "daterange_canonical", "daterange_subdiff", "enum_first", "enum_last",
	"enum_range", "int4range", "int4range_canonical", "int4range_subdiff", "int8range",
	"int8range_canonical", "int8range_subdiff", "isempty", "lower_inc", "lower_inf", "multirange",
	"numrange", "numrange_subdiff", "range_merge", "tsrange", "tsrange_subdiff", "tstzrange",
	"tstzrange_subdiff", "upper_inc", "upper_inf",
}}

// arrayFunctions: PostgreSQL's "Array Functions".
var arrayFunctions = builtinFamily{"array", []string{
	"array_append", "array_cat", "array_dims", "array_fill", "array_length", "array_lower",
	"array_ndims", "array_position", "array_positions", "array_prepend", "array_remove",
	"array_replace", "array_to_string", "array_upper", "cardinality", "trim_array",
}}

// seriesFunctions: set-returning generators over their arguments.
var seriesFunctions = builtinFamily{"set-returning generators", []string{
	"generate_series", "generate_subscripts", "unnest",
}}

// jsonFunctions: json, jsonb and SQL/JSON path functions, row_to_json
// and to_json(b) (which serialise the row or value they are given, as the
// query already sees it).
var jsonFunctions = builtinFamily{"json", []string{
	"array_to_json", "json_array_elements", "json_array_elements_text", "json_array_length",
	"json_build_array", "json_build_object", "json_each", "json_each_text", "json_extract_path",
	"json_extract_path_text", "json_object", "json_object_keys", "json_populate_record",
	"json_populate_recordset", "json_strip_nulls", "json_to_record", "json_to_recordset",
	"json_typeof", "jsonb_array_elements", "jsonb_array_elements_text", "jsonb_array_length",
	"jsonb_build_array", "jsonb_build_object", "jsonb_each", "jsonb_each_text",
	"jsonb_extract_path", "jsonb_extract_path_text", "jsonb_insert", "jsonb_object",
	"jsonb_object_keys", "jsonb_path_exists", "jsonb_path_exists_tz", "jsonb_path_match",
	"jsonb_path_match_tz", "jsonb_path_query", "jsonb_path_query_array",
	"jsonb_path_query_array_tz", "jsonb_path_query_first", "jsonb_path_query_first_tz",
	"jsonb_path_query_tz", "jsonb_populate_record", "jsonb_populate_recordset", "jsonb_pretty",
	"jsonb_set", "jsonb_set_lax", "jsonb_strip_nulls", "jsonb_to_record", "jsonb_to_recordset",
	"jsonb_typeof", "row_to_json", "to_json", "to_jsonb",
}}

// xmlFunctions: XML predicates and XPath over a given document
// (PostgreSQL's libxml setup loads no external entities).
var xmlFunctions = builtinFamily{"xml", []string{
	"xml_is_well_formed", "xml_is_well_formed_content", "xml_is_well_formed_document",
	"xmlcomment", "xmlexists", "xmlvalidate", "xpath", "xpath_exists",
}}
