package sqlrewrite

// Aggregates and window functions. They combine the values of the rows
// their query level produces — rows the filter kept, columns as masked —
// and nothing else. Their internal steps (transition and final
// functions) are refused: a query calls the aggregate
// (builtins_internal.go).

// aggregateFunctions: every aggregate of pg_catalog (prokind 'a'),
// ordered-set ones included.
var aggregateFunctions = builtinFamily{"aggregate", []string{
	"array_agg", "avg", "bit_and", "bit_or", "bit_xor", "bool_and", "bool_or", "corr", "count",
	"covar_pop", "covar_samp", "every", "json_agg", "json_object_agg", "jsonb_agg",
	"jsonb_object_agg", "max", "min", "mode", "percentile_cont", "percentile_disc", "range_agg",
	"range_intersect_agg", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2",
	"regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "stddev", "stddev_pop", "stddev_samp",
	"string_agg", "sum", "var_pop", "var_samp", "variance", "xmlagg",
}}

// windowFunctions: every window function of pg_catalog (prokind 'w');
// rank, dense_rank, percent_rank and cume_dist are also the
// hypothetical-set aggregates of the same names.
var windowFunctions = builtinFamily{"window", []string{
	"cume_dist", "dense_rank", "first_value", "lag", "last_value", "lead", "nth_value", "ntile",
	"percent_rank", "rank", "row_number",
}}
