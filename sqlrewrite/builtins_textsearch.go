package sqlrewrite

// textSearchFunctions: full text search over given documents and
// queries, and the parser and dictionary tools (ts_debug, ts_parse,
// ts_lexize), which read the text search configuration in the catalog.
// ts_stat and ts_rewrite(query, text) run a query string and are refused
// (builtins_refused.go).
var textSearchFunctions = builtinFamily{"text search", []string{
	"array_to_tsvector", "get_current_ts_config", "json_to_tsvector", "jsonb_to_tsvector",
	"numnode", "phraseto_tsquery", "plainto_tsquery", "querytree", "setweight", "strip",
	"to_tsquery", "to_tsvector", "ts_debug", "ts_delete", "ts_filter", "ts_headline", "ts_lexize",
	"ts_parse", "ts_rank", "ts_rank_cd", "ts_token_type", "tsvector_to_array",
	"websearch_to_tsquery",
}}
