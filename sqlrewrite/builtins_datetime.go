package sqlrewrite

// dateTimeFunctions: date and time arithmetic, construction and
// extraction, the transaction's and statement's clocks, and the time
// zone tables (pg_timezone_names, pg_timezone_abbrevs). EXTRACT, AT TIME
// ZONE and OVERLAPS parse into extract, timezone and overlaps. Each reads
// its arguments and the clock only.
var dateTimeFunctions = builtinFamily{"date/time", []string{
	"age", "clock_timestamp", "date_bin", "date_part", "date_trunc", "extract", "isfinite",
	"justify_days", "justify_hours", "justify_interval", "make_date", "make_interval", "make_time",
	"make_timestamp", "make_timestamptz", "now", "overlaps", "pg_timezone_abbrevs",
	"pg_timezone_names", "statement_timestamp", "timeofday", "timezone", "transaction_timestamp",
}}
