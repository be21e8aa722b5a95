package sqlrewrite

// Numbers and bits. Every function here computes its result from its
// arguments alone; called on a masked or filtered value it sees only
// what the user's query sees.

// mathFunctions: arithmetic, rounding, logarithms, trigonometry, the
// session's random numbers (setseed seeds only this session's random),
// and num_nulls and num_nonnulls, which count null arguments.
var mathFunctions = builtinFamily{"math", []string{
	"abs", "acos", "acosd", "acosh", "asin", "asind", "asinh", "atan", "atan2", "atan2d", "atand",
	"atanh", "cbrt", "ceil", "ceiling", "cos", "cosd", "cosh", "cot", "cotd", "degrees", "dexp",
	"div", "dlog1", "dlog10", "dround", "dtrunc", "exp", "factorial", "floor", "gcd", "int4inc",
	"int8_sum", "lcm", "ln", "log", "log10", "min_scale", "mod", "num_nonnulls", "num_nulls",
	"numeric_div_trunc", "numeric_exp", "numeric_inc", "numeric_ln", "numeric_log", "numeric_sqrt",
	"pi", "pow", "power", "radians", "random", "round", "scale", "setseed", "sign", "sin", "sind",
	"sinh", "sqrt", "tan", "tand", "tanh", "trim_scale", "trunc", "width_bucket",
}}

// bitFunctions: reading and setting single bits and bytes of bit strings
// and bytea values.
var bitFunctions = builtinFamily{"bit and bytea", []string{
	"bit_count", "get_bit", "get_byte", "set_bit", "set_byte",
}}
