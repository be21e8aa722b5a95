package sqlrewrite

// Types: the functions of single data types, type input and output, and
// casts. Each computes from its arguments alone.

// networkFunctions: inet, cidr and macaddr functions.
var networkFunctions = builtinFamily{"network", []string{
	"abbrev", "broadcast", "family", "host", "hostmask", "inet_merge", "inet_same_family",
	"macaddr8_set7bit", "masklen", "netmask", "network", "set_masklen",
}}

// uuidFunctions: gen_random_uuid.
var uuidFunctions = builtinFamily{"uuid", []string{
	"gen_random_uuid",
}}

// geometryFunctions: PostgreSQL's "Geometric Functions".
var geometryFunctions = builtinFamily{"geometric", []string{
	"area", "bound_box", "center", "diagonal", "diameter", "height", "isclosed", "ishorizontal",
	"isopen", "isparallel", "isperp", "isvertical", "line", "npoints", "pclose", "popen", "radius",
	"slope", "width",
}}

// typeIOFunctions: the text input and output and binary output functions
// of data types a value can have (textin, int4out, regclassin, …), and
// type modifier input and output. A cast calls these anyway; called by
// name they do the same. Binary input functions take an internal
// argument that SQL cannot supply, and the input and output of
// pseudo-types and internal types (statistics, plan trees) serve no
// value of a user's: both are refused (builtins_internal.go).
var typeIOFunctions = builtinFamily{"type input and output", []string{
	"aclitemin", "aclitemout", "array_in", "array_out", "array_send", "bit_in", "bit_out",
	"bit_send", "bittypmodin", "bittypmodout", "boolin", "boolout", "boolsend", "box_in",
	"box_out", "box_send", "bpcharin", "bpcharout", "bpcharsend", "bpchartypmodin",
	"bpchartypmodout", "byteain", "byteaout", "byteasend", "cash_in", "cash_out", "cash_send",
	"charin", "charout", "charsend", "cidin", "cidout", "cidr_in", "cidr_out", "cidr_send",
	"cidsend", "circle_in", "circle_out", "circle_send", "date_in", "date_out", "date_send",
	"enum_in", "enum_out", "enum_send", "float4in", "float4out", "float4send", "float8in",
	"float8out", "float8send", "inet_in", "inet_out", "inet_send", "int2in", "int2out", "int2send",
	"int2vectorin", "int2vectorout", "int2vectorsend", "int4in", "int4out", "int4send", "int8in",
	"int8out", "int8send", "interval_in", "interval_out", "interval_send", "intervaltypmodin",
	"intervaltypmodout", "json_in", "json_out", "json_send", "jsonb_in", "jsonb_out", "jsonb_send",
	"jsonpath_in", "jsonpath_out", "jsonpath_send", "line_in", "line_out", "line_send", "lseg_in",
	"lseg_out", "lseg_send", "macaddr8_in", "macaddr8_out", "macaddr8_send", "macaddr_in",
	"macaddr_out", "macaddr_send", "multirange_in", "multirange_out", "multirange_send", "namein",
	"nameout", "namesend", "numeric_in", "numeric_out", "numeric_send", "numerictypmodin",
	"numerictypmodout", "oidin", "oidout", "oidsend", "oidvectorin", "oidvectorout",
	"oidvectorsend", "path_in", "path_out", "path_send", "pg_lsn_in", "pg_lsn_out", "pg_lsn_send",
	"pg_snapshot_in", "pg_snapshot_out", "pg_snapshot_send", "point_in", "point_out", "point_send",
	"poly_in", "poly_out", "poly_send", "range_in", "range_out", "range_send", "record_in",
	"record_out", "record_send", "regclassin", "regclassout", "regclasssend", "regcollationin",
	"regcollationout", "regcollationsend", "regconfigin", "regconfigout", "regconfigsend",
	"regdictionaryin", "regdictionaryout", "regdictionarysend", "regnamespacein",
	"regnamespaceout", "regnamespacesend", "regoperatorin", "regoperatorout", "regoperatorsend",
	"regoperin", "regoperout", "regopersend", "regprocedurein", "regprocedureout",
	"regproceduresend", "regprocin", "regprocout", "regprocsend", "regrolein", "regroleout",
	"regrolesend", "regtypein", "regtypeout", "regtypesend", "textin", "textout", "textsend",
	"tidin", "tidout", "tidsend", "time_in", "time_out", "time_send", "timestamp_in",
	"timestamp_out", "timestamp_send", "timestamptypmodin", "timestamptypmodout", "timestamptz_in",
	"timestamptz_out", "timestamptz_send", "timestamptztypmodin", "timestamptztypmodout",
	"timetypmodin", "timetypmodout", "timetz_in", "timetz_out", "timetz_send", "timetztypmodin",
	"timetztypmodout", "tsqueryin", "tsqueryout", "tsquerysend", "tsvectorin", "tsvectorout",
	"tsvectorsend", "txid_snapshot_in", "txid_snapshot_out", "txid_snapshot_send", "uuid_in",
	"uuid_out", "uuid_send", "varbit_in", "varbit_out", "varbit_send", "varbittypmodin",
	"varbittypmodout", "varcharin", "varcharout", "varcharsend", "varchartypmodin",
	"varchartypmodout", "xid8in", "xid8out", "xid8send", "xidin", "xidout", "xidsend", "xml_in",
	"xml_out", "xml_send",
}}

// castFunctions: functions named after the type they convert to, which
// the function-call form of a cast calls (int4(x), text(x),
// numeric(x, 10), varchar(x, 20), …).
var castFunctions = builtinFamily{"casts", []string{
	"bit", "bool", "box", "bpchar", "char", "cidr", "circle", "date", "datemultirange", "float4",
	"float8", "int2", "int4", "int4multirange", "int8", "int8multirange", "interval", "lseg",
	"macaddr", "macaddr8", "money", "name", "numeric", "nummultirange", "oid", "path", "point",
	"polygon", "regclass", "text", "time", "timestamp", "timestamptz", "timetz", "tsmultirange",
	"tstzmultirange", "varbit", "varchar", "xid", "xml",
}}
