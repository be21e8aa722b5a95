package sqlrewrite

// Text. Every function here computes its result from its arguments alone
// (format and quote_* build strings; they run nothing).

// stringFunctions: the string functions of PostgreSQL's "String Functions
// and Operators", parse_ident and nameconcatoid (string building on a
// name).
var stringFunctions = builtinFamily{"string", []string{
	"ascii", "bit_length", "btrim", "char_length", "character_length", "chr", "concat",
	"concat_ws", "initcap", "is_normalized", "left", "length", "lower", "lpad", "ltrim",
	"nameconcatoid", "normalize", "octet_length", "overlay", "parse_ident", "position", "repeat",
	"replace", "reverse", "right", "rpad", "rtrim", "split_part", "starts_with", "string_to_array",
	"string_to_table", "strpos", "substr", "substring", "textlen", "translate", "unistr", "upper",
}}

// patternFunctions: LIKE, SIMILAR TO and regular expressions (LIKE …
// ESCAPE and SIMILAR TO parse into like_escape and similar_to_escape).
var patternFunctions = builtinFamily{"pattern matching", []string{
	"like", "like_escape", "notlike", "regexp_count", "regexp_instr", "regexp_like",
	"regexp_match", "regexp_matches", "regexp_replace", "regexp_split_to_array",
	"regexp_split_to_table", "regexp_substr", "similar_escape", "similar_to_escape",
}}

// formattingFunctions: to_char and its inverses, format, the quote_*
// functions and cash_words.
var formattingFunctions = builtinFamily{"formatting", []string{
	"cash_words", "format", "quote_ident", "quote_literal", "quote_nullable", "to_char", "to_date",
	"to_hex", "to_number", "to_timestamp",
}}

// encodingFunctions: encodings, base64/hex, digests, and the encoding
// name lookups drivers call (pg_encoding_to_char, getdatabaseencoding).
var encodingFunctions = builtinFamily{"encoding", []string{
	"convert", "convert_from", "convert_to", "decode", "encode", "getdatabaseencoding", "md5",
	"pg_char_to_encoding", "pg_client_encoding", "pg_encoding_max_length", "pg_encoding_to_char",
	"sha224", "sha256", "sha384", "sha512", "to_ascii",
}}
