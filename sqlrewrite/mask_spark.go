package sqlrewrite

// The "spark" mask dialect (policy.mask-dialect = "spark"): each Ranger
// mask type becomes the PostgreSQL expression that returns what Spark
// returns under Apache Kyuubi's Spark AuthZ plugin, which replaces a masked
// column by a Spark SQL expression and casts nothing back (docs/masks.md,
// "Dialects"):
//
//	MASK               regexp_replace chain: [A-Z]→X, [a-z]→x, [0-9]→n,
//	                   any other code point → U, over CAST(col AS STRING)
//	MASK_SHOW_FIRST_4  the same chain from position 5 (Java's regex region,
//	                   which starts at UTF-16 unit 4, not code point 4)
//	MASK_SHOW_LAST_4   concat(chain(left(col, length(col) - 4)), right(col, 4))
//	MASK_HASH          md5(cast(col as string))
//	MASK_DATE_SHOW_YEAR date_trunc('YEAR', col): a timestamp
//	MASK_NULL          NULL
//
// So the masked column is text (a timestamp for MASK_DATE_SHOW_YEAR)
// whatever its type. The column's text is Spark's CAST(… AS STRING) of the
// value Spark's JDBC source reads: char(n) padded, dates yyyy-MM-dd,
// timestamps without trailing zeros in the fraction. Types whose text
// Spark writes differently from PostgreSQL (floating point, intervals, …)
// become a typed NULL; MASK_DATE_SHOW_YEAR on a type Spark's date_trunc
// does not take fails the query, as in Spark. Every expression is checked
// against Spark itself (internal/interop, TestMaskTable).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pgranger/pgranger/ranger"
)

// Mask dialects (policy.mask-dialect).
const (
	MaskDialectHive  = "hive"
	MaskDialectSpark = "spark"
)

const (
	maskOIDBool      = 16
	maskOIDNumeric   = 1700
	maskOIDTimestamp = 1114
)

// ParseMaskDialect validates a dialect name; "" is "hive".
func ParseMaskDialect(d string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(d)) {
	case "", MaskDialectHive:
		return MaskDialectHive, nil
	case MaskDialectSpark:
		return MaskDialectSpark, nil
	}
	return "", fmt.Errorf(`sqlrewrite: mask dialect must be "hive" or "spark", not %q`, d)
}

// maskSpark builds the spark dialect's expression for a mask type other
// than MASK_NULL, MASK_NONE and CUSTOM.
func maskSpark(maskType string, col ColumnType, v string, oid uint32) (string, error) {
	if maskType == ranger.MaskTypeDateShowYear {
		return sparkDateTrunc(col, v, oid)
	}
	text, ok := sparkText(v, oid, col.TypMod)
	if !ok {
		if s, ok := maskTypedNull(col); ok {
			return s, nil
		}
		return "", fmt.Errorf("sqlrewrite: no SQL name for type OID %d, cannot build a typed NULL", col.OID)
	}
	var body string
	switch maskType {
	case ranger.MaskTypeMask:
		body = sparkClasses(text)
	case ranger.MaskTypeShowLast4:
		// Spark's left() of a negative length is '', PostgreSQL's drops
		// characters from the end: hence greatest().
		head := maskFn("left", text, "GREATEST("+maskOp(maskFn("length", text), "-", "4")+", 0)")
		body = maskOp(sparkClasses(head), "||", maskFn("right", text, "4"))
	case ranger.MaskTypeShowFirst4:
		body = sparkShowFirst4(text)
	case ranger.MaskTypeHash:
		body = maskFn("md5", text)
	default:
		return "", fmt.Errorf("%w: %q", ErrUnmappableMask, maskType)
	}
	return "(" + body + ") COLLATE " + maskDefault, nil
}

// sparkText is the column as Spark's CAST(col AS STRING) writes the value
// its JDBC source read; ok is false for types whose text differs.
func sparkText(v string, oid uint32, typmod int32) (string, bool) {
	switch oid {
	case maskOIDText, maskOIDVarchar:
		return v + "::pg_catalog.text", true
	case maskOIDBpchar:
		// The JDBC source reads char(n) with its padding.
		if typmod > 4 {
			return maskFn("rpad", v+"::pg_catalog.text", strconv.Itoa(int(typmod-4))), true
		}
		return maskFn("textin", maskFn("bpcharout", v)), true
	case maskOIDInt2, maskOIDInt4, maskOIDInt8, maskOIDNumeric, maskOIDBool:
		// The same digits, scale and words as Java's toString.
		return v + "::pg_catalog.text", true
	case maskOIDDate:
		// Not ::text, which follows the session's DateStyle.
		return maskFn("to_char", v, "'YYYY-MM-DD'"), true
	case maskOIDTimestamp:
		return sparkTimestampText(v), true
	}
	return "", false
}

// sparkTimestampText is yyyy-MM-dd HH:mm:ss with the fraction's trailing
// zeros (and a bare point) dropped, as Spark prints a timestamp.
func sparkTimestampText(v string) string {
	frac := maskFn("rtrim", maskFn("rtrim", maskFn("to_char", v, "'.US'"), "'0'"), "'.'")
	return maskOp(maskFn("to_char", v, "'YYYY-MM-DD HH24:MI:SS'"), "||", frac)
}

// sparkClasses is Kyuubi's regexp_replace chain. translate() does the
// three ASCII classes (what [A-Z], [a-z] and [0-9] match in Java) and one
// regexp_replace the rest, code point by code point as Java's regex does.
func sparkClasses(x string) string {
	from := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	to := strings.Repeat("X", 26) + strings.Repeat("x", 26) + strings.Repeat("n", 10)
	t := maskFn("translate", "("+x+" COLLATE "+maskC+")", maskLit(from), maskLit(to))
	return maskRR(t, "[^A-Za-z0-9]", "U")
}

// sparkShowFirst4: Spark's regexp_replace(…, 5) leaves a value of fewer
// than 5 code points as it is; otherwise Java's matcher starts at UTF-16
// unit 4. The kept prefix is the code points that fill exactly 4 units
// (B = a BMP character, S = a supplementary one); when a supplementary
// character straddles unit 4, Java replaces its low surrogate with U and
// the lone high surrogate becomes '?' in Spark's UTF-8 string.
func sparkShowFirst4(x string) string {
	b, s := `[^\U00010000-\U0010FFFF]`, maskSupp
	exact := "^(" + b + "{4}|" + b + "{2}" + s + "|" + b + s + b + "|" + s + b + "{2}|" + s + "{2})"
	short := "^(" + b + "{3}|" + b + s + "|" + s + b + ")"
	xi := "(" + x + " COLLATE " + maskC + ")"
	keep := maskFn("substring", xi, maskLit(exact))
	keep3 := maskFn("substring", xi, maskLit(short))
	rest := func(n string) string { return maskFn("substr", x, maskOp(n, "+", "1")) }
	exactBody := maskOp(keep, "||", sparkClasses(rest(maskFn("length", keep))))
	// The straddling character is the one after the 3-unit prefix.
	straddle := maskOp(maskOp(keep3, "||", "'?U'"), "||", sparkClasses(rest(maskOp(maskFn("length", keep3), "+", "1"))))
	return "CASE WHEN " + maskOp(maskFn("length", x), "<", "5") + " THEN " + x +
		" WHEN " + keep + " IS NOT NULL THEN " + exactBody + " ELSE " + straddle + " END"
}

// sparkDateTrunc is date_trunc('YEAR', col): a timestamp. Spark takes
// dates, timestamps and strings (cast to a timestamp: NULL when the
// string is not one); any other type is an analysis error, so the mask
// cannot be applied.
func sparkDateTrunc(col ColumnType, v string, oid uint32) (string, error) {
	switch oid {
	case maskOIDDate:
		return maskFn("date_trunc", "'year'", v+"::pg_catalog.timestamp"), nil
	case maskOIDTimestamp:
		return maskFn("date_trunc", "'year'", v), nil
	case maskOIDText, maskOIDVarchar, maskOIDBpchar:
		return sparkStringYear(v + "::pg_catalog.text"), nil
	}
	return "", fmt.Errorf("mask dialect spark: date_trunc('YEAR', …) in Spark does not take %s", col.SQLName)
}

// sparkStringYear: the year of a string Spark casts to a timestamp, for
// the forms yyyy, yyyy-[m]m and yyyy-[m]m-[d]d (with surrounding white
// space, which Spark trims) and valid months and days; other strings give
// NULL. (Spark also reads times and zones after the date; pgranger gives
// NULL for those, docs/masks.md.)
func sparkStringYear(t string) string {
	tr := maskFn("btrim", t)
	m := maskFn("regexp_match", tr, maskLit(`^([0-9]{4})(?:-([0-9]{1,2})(?:-([0-9]{1,2}))?)?$`))
	part := func(i int) string { return "(" + m + ")[" + strconv.Itoa(i) + "]::pg_catalog.int4" }
	has := func(i int) string { return "(" + m + ")[" + strconv.Itoa(i) + "] IS NOT NULL" }
	y, mo, d := part(1), part(2), part(3)
	between := func(x, lo, hi string) string {
		return "(" + maskOp(x, ">=", lo) + " AND " + maskOp(x, "<=", hi) + ")"
	}
	// The last day of the month: its first day plus a month less a day.
	last := "EXTRACT(DAY FROM " + maskOp(maskFn("make_date", y, mo, "1"), "+", "'1 month -1 day'::pg_catalog.interval") + ")"
	// A CASE, not AND: make_date() must not see a month that is out of range.
	return "(CASE WHEN " + m + " IS NULL OR " + maskOp(y, "<", "1") + " THEN NULL" +
		" WHEN " + has(2) + " AND NOT " + between(mo, "1", "12") + " THEN NULL" +
		" WHEN " + has(3) + " AND NOT " + between(d, "1", last) + " THEN NULL" +
		" ELSE " + maskFn("make_timestamp", y, "1", "1", "0", "0", "0") + " END)"
}
