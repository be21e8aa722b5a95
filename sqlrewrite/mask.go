package sqlrewrite

// Mask expression builders (docs/masks.md; the reference is Hive 3.1.3's
// GenericUDFMask* on Java 17, in apache/hive ql/src/java/org/apache/
// hadoop/hive/ql/udf/generic/, which the mask differential of
// internal/interop/maskdiff runs).
//
// Each Ranger mask type becomes one plain PostgreSQL expression that returns,
// for the value of a column, exactly what Hive's mask UDF behind the
// hive service-def transformer returns, cast back to the column type as
// Hive's TableMask does. Nothing is installed in the backend. The
// expressions
//
//   - classify characters with ICU (COLLATE "und-x-icu": [[:upper:]] is
//     u_isupper = Lu, [[:lower:]] = Ll, [[:digit:]] = Nd), whatever the
//     database's or the column's collation, and never replace a character
//     above U+FFFF (Java sees its two surrogates, which are "other") nor
//     a letter that Unicode 14 or later added (Java 17 knows Unicode 13);
//   - count lengths in UTF-16 code units: a string with supplementary
//     characters is first "expanded" (each such character doubled, so that
//     one code point stands for one UTF-16 unit), split, and collapsed back;
//   - have a fast path for ASCII-only strings (one translate, no regex;
//     docs/masks.md, "Cost", says what it costs and why) and one
//     for strings without supplementary characters (left/right and one
//     regexp_replace per class), and take the general path only when needed
//     (a character above U+FFFF or a letter newer than Unicode 13);
//   - mask integers with one width_bucket() lookup of the value's sign and
//     digit count in constant arrays (no text round trip, no overflow, few
//     nodes to parse and plan), reproducing Hive's results at each type's
//     minimum;
//   - qualify every function, operator, type and collation with pg_catalog,
//     so a session's search_path cannot substitute its own objects;
//   - end in COLLATE pg_catalog."default" for text types, so the masked column
//     does not carry the ICU collation into the user's ORDER BY or
//     comparisons.
//
// The reference for every result is Hive's UDFs themselves: the mask
// differential (internal/interop/maskdiff) compares these expressions, run
// on PostgreSQL, with them.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pgranger/pgranger/ranger"
)

// ColumnType is what the mask builder knows about a column, from the catalog.
type ColumnType struct {
	OID     uint32 // pg_attribute.atttypid
	BaseOID uint32 // base type for a domain; == OID otherwise (0 is taken as OID)
	TypMod  int32  // pg_attribute.atttypmod (-1 = none); char(n) has TypMod n+4
	SQLName string // format_type(atttypid, atttypmod), e.g. "character(8)", "character varying(20)", "public.mood"
}

// MaskOptions are settings that change mask results.
type MaskOptions struct {
	HashAlgo string // "sha256" (default, "" = sha256) or "sha512" (Hive's hive.masking.algo)
	// Dialect is whose results the masks reproduce: "hive" (default, "")
	// HiveServer2's, or "spark" Spark's under Kyuubi's plugin
	// (mask_spark.go).
	Dialect string
}

// ErrUnmappableMask: the mask type has no PostgreSQL equivalent (a type name
// the hive service-def does not define); the caller turns the column into a
// typed NULL.
var ErrUnmappableMask = errors.New("sqlrewrite: mask type has no PostgreSQL equivalent")

// ErrMaskNotBuilt is returned for MASK_NONE and CUSTOM, which the caller
// applies itself (the column unchanged; the policy's valueExpr).
var ErrMaskNotBuilt = errors.New("sqlrewrite: MASK_NONE and CUSTOM are applied by the caller, not built by MaskSQL")

// Type OIDs the mask UDFs take (pg_type.dat; fixed across versions).
const (
	maskOIDInt8    = 20
	maskOIDInt2    = 21
	maskOIDInt4    = 23
	maskOIDText    = 25
	maskOIDBpchar  = 1042
	maskOIDVarchar = 1043
	maskOIDDate    = 1082
)

// MaskSQL returns one PostgreSQL expression, as SQL text, that yields for the
// value of colRef exactly what Hive's UDF behind the Ranger mask type
// returns. colRef is an already-quoted column reference such as `"ssn"`; it
// and col.SQLName are inserted verbatim. The expression's type OID equals
// col.OID (varchar(n) and char(n) keep their length; other typmods may drop).
// Types Hive's UDFs do not take become a typed NULL, as does MASK_NULL. An
// unknown mask type is ErrUnmappableMask; MASK_NONE and CUSTOM are
// ErrMaskNotBuilt.
func MaskSQL(maskType string, col ColumnType, colRef string, opts MaskOptions) (string, error) {
	switch maskType {
	case ranger.MaskTypeMask, ranger.MaskTypeShowLast4, ranger.MaskTypeShowFirst4, ranger.MaskTypeHash, ranger.MaskTypeNull, ranger.MaskTypeDateShowYear:
	case ranger.MaskTypeNone, ranger.MaskTypeCustom:
		return "", fmt.Errorf("%w (%s)", ErrMaskNotBuilt, maskType)
	default:
		return "", fmt.Errorf("%w: %q", ErrUnmappableMask, maskType)
	}
	if strings.TrimSpace(colRef) == "" {
		return "", errors.New("sqlrewrite: MaskSQL needs a column reference")
	}
	null := func() (string, error) {
		if s, ok := maskTypedNull(col); ok {
			return s, nil
		}
		return "", fmt.Errorf("sqlrewrite: no SQL name for type OID %d, cannot build a typed NULL", col.OID)
	}
	if maskType == ranger.MaskTypeNull {
		return null()
	}
	dialect, err := ParseMaskDialect(opts.Dialect)
	if err != nil {
		return "", err
	}
	v := "(" + colRef + ")"
	oid := col.OID
	if col.BaseOID != 0 && col.BaseOID != col.OID {
		oid = 0 // a domain: Hive has none; typed NULL like any other type it does not take
	}
	if dialect == MaskDialectSpark {
		return maskSpark(maskType, col, v, oid)
	}
	switch oid {
	case maskOIDText, maskOIDVarchar, maskOIDBpchar:
		algo := ""
		if maskType == ranger.MaskTypeHash {
			a, err := maskHashAlgo(opts.HashAlgo)
			if err != nil {
				return "", err
			}
			algo = a
		}
		return maskString(maskType, oid, col.TypMod, v, algo), nil
	case maskOIDInt2, maskOIDInt4, maskOIDInt8:
		if maskType == ranger.MaskTypeHash {
			return null()
		}
		return maskInteger(maskType, maskInts[oid], v), nil
	case maskOIDDate:
		if maskType == ranger.MaskTypeHash {
			return null()
		}
		return maskDate(maskType, v), nil
	}
	return null()
}

// TypedNull returns a NULL of the column's type, e.g. `NULL::pg_catalog.numeric`,
// `NULL::public.mood`, `NULL::pg_catalog._int4` (integer[]). Built-in types
// are named in pg_catalog (varchar(n) and char(n) keep their length, other
// typmods drop); other types by col.SQLName. With neither it returns an
// untyped `NULL`.
func TypedNull(col ColumnType) string {
	if s, ok := maskTypedNull(col); ok {
		return s
	}
	return "NULL"
}

func maskTypedNull(col ColumnType) (string, bool) {
	switch col.OID {
	case maskOIDBpchar:
		return maskBpchar("NULL", col.TypMod), true
	case maskOIDVarchar:
		return "NULL::pg_catalog.varchar" + maskLenMod(col.TypMod), true
	}
	if name, ok := maskBuiltinTypes[col.OID]; ok {
		return "NULL::" + maskTypeName(name), true
	}
	if s := strings.TrimSpace(col.SQLName); s != "" {
		return "NULL::" + s, true
	}
	return "", false
}

func maskTypeName(typname string) string {
	if typname == "char" {
		return `pg_catalog."char"`
	}
	return "pg_catalog." + typname
}

func maskHashAlgo(a string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(a)) {
	case "", "sha256":
		return "sha256", nil
	case "sha512":
		return "sha512", nil
	}
	return "", fmt.Errorf(`sqlrewrite: mask hash algorithm must be "sha256" or "sha512", not %q`, a)
}

// ---- SQL text helpers ----

func maskFn(name string, args ...string) string {
	return "pg_catalog." + name + "(" + strings.Join(args, ", ") + ")"
}

func maskOp(a, op, b string) string {
	return "(" + a + " OPERATOR(pg_catalog." + op + ") " + b + ")"
}

// maskLit is a string literal; with backslashes it is an E” literal, so it
// means the same whatever standard_conforming_strings says.
func maskLit(s string) string {
	q := strings.ReplaceAll(s, "'", "''")
	if strings.Contains(s, `\`) {
		return "E'" + strings.ReplaceAll(q, `\`, `\\`) + "'"
	}
	return "'" + q + "'"
}

const (
	maskICU     = `pg_catalog."und-x-icu"`
	maskC       = `pg_catalog."C"`
	maskDefault = `pg_catalog."default"`

	maskUpper = `[[:upper:]]`
	maskLower = `[[:lower:]]`
	maskDigit = `[[:digit:]]`
	maskAlnum = `[[:upper:][:lower:][:digit:]]`
	// maskSupp is a character above U+FFFF: two UTF-16 units to Java,
	// surrogates, which Hive never replaces.
	maskSupp = `[\U00010000-\U0010FFFF]`
	// maskNewer are the upper- and lower-case letters of the Basic
	// Multilingual Plane that Unicode 14 to 16 added. Java 17, whose
	// Character.getType knows Unicode 13, has them unassigned, so Hive
	// keeps them; the ICU of a current PostgreSQL (ICU 70 and later) has
	// them as letters (docs/masks.md, "Characters are Java 17's"). No
	// digit of the plane was added.
	maskNewer = `\u1C89\u1C8A\u2C2F\u2C5F\uA7C0\uA7C1\uA7CB-\uA7CD\uA7D0\uA7D1\uA7D3\uA7D5-\uA7DC`
	// maskKept is a character Hive never replaces although ICU's classes
	// may take it: supplementary characters and maskNewer. A string
	// with one goes the general path, where maskNotKept guards each class.
	maskKept    = `[\U00010000-\U0010FFFF` + maskNewer + `]`
	maskNotKept = `(?!` + maskKept + `)`

	// ASCII fast path. translate() looks each character up in its from-list
	// entry by entry (about 3 ns an entry, and as much again to walk the
	// to-list to the same position; a character that is not in the list
	// costs the whole list), so the likeliest characters come first:
	// digits, then letters by frequency. The masks that turn every letter
	// into x lower-case the value first (ASCII only, under "C"), which
	// shortens their list from 62 entries to 36. Listing separators such
	// as the space and the hyphen early (mapped to themselves) was measured
	// too: it helps SSNs and phone numbers as much as it slows e-mail
	// addresses and names (docs/masks.md, "Cost").
	maskASCIIDigits = "0123456789"
	maskASCIILower  = "etaoinsrhldcumfpgwybvkxjqz"
	maskASCIIUpper  = "ETAOINSRHLDCUMFPGWYBVKXJQZ"
)

var (
	maskASCIIFromMask = maskASCIIDigits + maskASCIILower + maskASCIIUpper
	maskASCIIToMask   = strings.Repeat("n", 10) + strings.Repeat("x", 26) + strings.Repeat("X", 26)
	maskASCIIFromX    = maskASCIIDigits + maskASCIILower
	maskASCIIToX      = strings.Repeat("x", 36)
)

// maskRR is a global regexp_replace.
func maskRR(x, pattern, repl string) string {
	return maskFn("regexp_replace", x, maskLit(pattern), maskLit(repl), "'g'")
}

// ---- strings ----

// maskString builds a mask of a text, varchar or char(n) column.
//
//	probe: the value as text, without char(n) padding (for the cheap checks)
//	src:   the value as Hive sees it (char(n) padded to n; a bpchar without
//	       length as stored)
//	s:     src with the ICU collation, so regex classes are Unicode's
//	c:     the value with the "C" collation, for lower() on the ASCII path:
//	       src for MASK_SHOW_LAST_4, whose last 4 may be padding, and probe
//	       for the others, as the cast back to char(n) pads the result and
//	       the masks keep spaces
func maskString(maskType string, oid uint32, typmod int32, v string, algo string) string {
	probe := v
	switch {
	case oid == maskOIDVarchar, oid == maskOIDBpchar && typmod > 4:
		probe = v + "::pg_catalog.text"
	case oid == maskOIDBpchar:
		// bpchar without a length keeps trailing spaces as stored (and
		// printed); a cast to text would strip them
		probe = maskFn("textin", maskFn("bpcharout", v))
	}
	src := probe
	if oid == maskOIDBpchar && typmod > 4 {
		src = maskFn("rpad", probe, strconv.Itoa(int(typmod-4)))
	}
	var body string
	if maskType == ranger.MaskTypeHash {
		body = maskFn("encode", maskFn(algo, maskFn("convert_to", src, "'UTF8'")), "'hex'")
	} else {
		s := "(" + src + " COLLATE " + maskICU + ")"
		c := "(" + probe + " COLLATE " + maskC + ")"
		if maskType == ranger.MaskTypeShowLast4 {
			c = "(" + src + " COLLATE " + maskC + ")"
		}
		ascii := maskOp(maskFn("octet_length", probe), "=", maskFn("length", probe))
		kept := maskOp("("+probe+" COLLATE "+maskICU+")", "~", maskLit(maskKept))
		// toX masks every letter and digit of an ASCII x under "C" with x;
		// icu gives the result the collation of the other branches, as CASE
		// requires.
		toX := func(x string) string {
			return maskFn("translate", maskFn("lower", x), maskLit(maskASCIIFromX), maskLit(maskASCIIToX))
		}
		icu := func(x string) string { return "(" + x + ") COLLATE " + maskICU }
		var fastASCII, bmp, general string
		switch maskType {
		case ranger.MaskTypeMask:
			fastASCII = icu(maskFn("translate", c, maskLit(maskASCIIFromMask), maskLit(maskASCIIToMask)))
			three := func(prefix string) string {
				return maskRR(maskRR(maskRR(s, prefix+maskUpper, "X"), prefix+maskLower, "x"), prefix+maskDigit, "n")
			}
			bmp, general = three(""), three(maskNotKept)
		case ranger.MaskTypeDateShowYear:
			fastASCII = icu(toX(c))
			bmp = maskRR(s, maskAlnum, "x")
			general = maskRR(s, maskNotKept+maskAlnum, "x")
		case ranger.MaskTypeShowLast4, ranger.MaskTypeShowFirst4:
			last := maskType == ranger.MaskTypeShowLast4
			// split returns (masked part, kept part) of x at 4 code points.
			split := func(x string) (string, string) {
				if last {
					return maskFn("left", x, "-4"), maskFn("right", x, "4")
				}
				return maskFn("substr", x, "5"), maskFn("left", x, "4")
			}
			join := func(masked, kept string) string {
				if last {
					return maskOp(masked, "||", kept)
				}
				return maskOp(kept, "||", masked)
			}
			cm, ck := split(c)
			fastASCII = icu(join(toX(cm), ck))
			m, k := split(s)
			bmp = join(maskRR(m, maskAlnum, "x"), k)
			// One code point per UTF-16 unit: double each supplementary
			// character, split and mask (never above U+FFFF), then undo.
			e := maskRR(s, "("+maskSupp+")", `\1\1`)
			em, ek := split(e)
			general = maskRR(join(maskRR(em, maskNotKept+maskAlnum, "x"), ek), "("+maskSupp+")"+maskSupp, `\1`)
		}
		body = "CASE WHEN " + ascii + " THEN " + fastASCII + " WHEN " + kept + " THEN " + general + " ELSE " + bmp + " END"
	}
	switch oid {
	case maskOIDVarchar:
		body = "(" + body + ")::pg_catalog.varchar" + maskLenMod(typmod)
	case maskOIDBpchar:
		body = maskBpchar("("+body+")", typmod)
	}
	return "(" + body + ") COLLATE " + maskDefault
}

// maskBpchar casts x to char(n), or to bpchar without a length. The latter
// is written as an array element because pg_query's deparser turns
// `::pg_catalog.bpchar` into `::char`, which is char(1), and
// `NULL::pg_catalog.bpchar` into `char NULL`, which does not parse.
func maskBpchar(x string, typmod int32) string {
	if typmod > 4 {
		return x + "::pg_catalog.bpchar" + maskLenMod(typmod)
	}
	return "(ARRAY[" + x + "]::pg_catalog._bpchar)[1]"
}

// maskLenMod is "(n)" for a varchar(n)/char(n) typmod: Hive casts each mask
// back to the column type, which cuts a hash to n characters.
func maskLenMod(typmod int32) string {
	if typmod > 4 {
		return "(" + strconv.Itoa(int(typmod-4)) + ")"
	}
	return ""
}

// ---- integers ----

type maskIntType struct {
	typ    string // cast target
	arr    string // its array type
	digits int    // decimal digits of the largest magnitude
	min    string // the type's minimum
	// Hive's results for the minimum, whose negation overflows inside Hive's
	// loops so that the kept digits are added with the wrong sign
	// (the mask differential checks them against Hive's UDFs).
	minLast, minFirst string
}

var maskInts = map[uint32]maskIntType{
	maskOIDInt2: {"pg_catalog.int2", "pg_catalog._int2", 5, "-32768", "-7232", "32759"},
	maskOIDInt4: {"pg_catalog.int4", "pg_catalog._int4", 10, "-2147483648", "-1111106352", "2146888889"},
	maskOIDInt8: {"pg_catalog.int8", "pg_catalog._int8", 19, "-9223372036854775808", "-1111111111111104192", "9222888888888888889"},
}

func maskPow10(k int) int64 {
	p := int64(1)
	for range k {
		p *= 10
	}
	return p
}

// maskOnes is 1…1 with k digits (10^19 - 1 would overflow).
func maskOnes(k int) int64 {
	o := int64(0)
	for range k {
		o = o*10 + 1
	}
	return o
}

// maskIntRange is a range of values with the same sign and number of
// digits.
type maskIntRange struct {
	neg    bool
	digits int
}

// maskIntRanges are the ranges of a type in ascending order, with the
// thresholds between them for width_bucket(): thresholds[i] is the lowest
// value of ranges[i+1]. 0 is in the range of the positive one-digit values.
func maskIntRanges(it maskIntType) ([]maskIntRange, []int64) {
	var ranges []maskIntRange
	var thresholds []int64
	for k := it.digits; k >= 1; k-- {
		ranges = append(ranges, maskIntRange{neg: true, digits: k})
		if k > 1 {
			thresholds = append(thresholds, 1-maskPow10(k-1))
		}
	}
	thresholds = append(thresholds, 0)
	for k := 1; k <= it.digits; k++ {
		ranges = append(ranges, maskIntRange{digits: k})
		if k < it.digits {
			thresholds = append(thresholds, maskPow10(k))
		}
	}
	return ranges, thresholds
}

func maskIntArray(it maskIntType, vals []int64) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = strconv.FormatInt(v, 10)
	}
	return "'{" + strings.Join(s, ",") + "}'::" + it.arr
}

// maskInteger builds MASK / MASK_SHOW_LAST_4 / MASK_SHOW_FIRST_4 /
// MASK_DATE_SHOW_YEAR on int2/int4/int8. width_bucket() finds, by binary
// search in a constant array of thresholds, which range of equal sign and
// digit count v lies in, and a second constant array holds, per range, the
// masked value or what to add to the kept digits. The SHOW masks test for
// the minimum first: Hive's results for it are not those of its digit
// count. No text round trip, no overflow, and a handful of nodes
// (PostgreSQL parses and plans every node for every statement; a CASE
// ladder has two per digit count).
func maskInteger(maskType string, it maskIntType, v string) string {
	ranges, thresholds := maskIntRanges(it)
	min := maskOp(v, "=", "'"+it.min+"'::"+it.typ)
	lookup := func(f func(r maskIntRange) int64) string {
		vals := make([]int64, len(ranges))
		for i, r := range ranges {
			vals[i] = f(r)
		}
		return "(" + maskIntArray(it, vals) + ")[" + maskOp(maskFn("width_bucket", v, maskIntArray(it, thresholds)), "+", "1") + "]"
	}
	sign := func(r maskIntRange, x int64) int64 {
		if r.neg {
			return -x
		}
		return x
	}
	var body string
	switch maskType {
	case ranger.MaskTypeMask, ranger.MaskTypeDateShowYear:
		// every digit → 1, sign kept; 0 has no digit and stays 0, as in
		// Hive 3.1.3 (later Hive releases give 1)
		body = "CASE WHEN " + maskOp(v, "=", "0") + " THEN 0 ELSE " +
			lookup(func(r maskIntRange) int64 { return sign(r, maskOnes(r.digits)) }) + " END"
	case ranger.MaskTypeShowLast4:
		// keep v % 10^4, higher digits → 1
		add := lookup(func(r maskIntRange) int64 {
			if r.digits <= 4 {
				return 0
			}
			return sign(r, maskOnes(r.digits-4)*10000)
		})
		body = "CASE WHEN " + min + " THEN " + it.minLast + " ELSE " + maskOp(maskOp(v, "%", "10000"), "+", add) + " END"
	case ranger.MaskTypeShowFirst4:
		// keep the 4 leading digits, the k-4 lower ones → 1: with
		// d = ±10^(k-4), v - v % d + d / 9 (d = 1 leaves v as is)
		d := lookup(func(r maskIntRange) int64 {
			if r.digits <= 4 {
				return 1
			}
			return sign(r, maskPow10(r.digits-4))
		})
		body = "CASE WHEN " + min + " THEN " + it.minFirst +
			" ELSE " + maskOp(maskOp(v, "-", maskOp(v, "%", d)), "+", maskOp(d, "/", "9")) + " END"
	}
	return "(" + body + ")::" + it.typ
}

// ---- dates ----

// maskDate builds the date masks. Hive's year 0 (MASK and SHOW_LAST/FIRST_4:
// Date.of(0, 1, 1)) is 0001-01-01 BC in PostgreSQL. Choices for values Hive
// has not: ±infinity under MASK/SHOW_* gives 0001-01-01 BC like any date;
// MASK_DATE_SHOW_YEAR keeps ±infinity and gives NULL for 4714 BC, whose
// January 1 precedes PostgreSQL's first date (4714-11-24 BC).
func maskDate(maskType string, v string) string {
	if maskType != ranger.MaskTypeDateShowYear {
		return "(CASE WHEN " + v + " IS NOT NULL THEN '0001-01-01 BC'::pg_catalog.date END)"
	}
	return "(CASE WHEN NOT " + maskFn("isfinite", v) + " THEN " + v +
		" WHEN " + maskOp(v, ">=", "'4713-01-01 BC'::pg_catalog.date") +
		" THEN " + maskFn("make_date", "EXTRACT(YEAR FROM "+v+")::pg_catalog.int4", "1", "1") + " END)"
}

// maskBuiltinTypes are pg_catalog's base, range and multirange types and
// their arrays (OIDs fixed by pg_type.dat), for typed NULLs that no
// search_path can redirect.
var maskBuiltinTypes = map[uint32]string{
	16: "bool", 17: "bytea", 18: "char", 19: "name", 20: "int8", 21: "int2", 22: "int2vector", 23: "int4",
	24: "regproc", 25: "text", 26: "oid", 27: "tid", 28: "xid", 29: "cid", 30: "oidvector", 114: "json",
	142: "xml", 143: "_xml", 199: "_json", 271: "_xid8", 600: "point", 601: "lseg", 602: "path", 603: "box",
	604: "polygon", 628: "line", 629: "_line", 650: "cidr", 651: "_cidr", 700: "float4", 701: "float8",
	718: "circle", 719: "_circle", 774: "macaddr8", 775: "_macaddr8", 790: "money", 791: "_money",
	829: "macaddr", 869: "inet", 1000: "_bool", 1001: "_bytea", 1002: "_char", 1003: "_name", 1005: "_int2",
	1006: "_int2vector", 1007: "_int4", 1008: "_regproc", 1009: "_text", 1010: "_tid", 1011: "_xid",
	1012: "_cid", 1013: "_oidvector", 1014: "_bpchar", 1015: "_varchar", 1016: "_int8", 1017: "_point",
	1018: "_lseg", 1019: "_path", 1020: "_box", 1021: "_float4", 1022: "_float8", 1027: "_polygon",
	1028: "_oid", 1033: "aclitem", 1034: "_aclitem", 1040: "_macaddr", 1041: "_inet", 1042: "bpchar",
	1043: "varchar", 1082: "date", 1083: "time", 1114: "timestamp", 1115: "_timestamp", 1182: "_date",
	1183: "_time", 1184: "timestamptz", 1185: "_timestamptz", 1186: "interval", 1187: "_interval",
	1231: "_numeric", 1266: "timetz", 1270: "_timetz", 1560: "bit", 1561: "_bit", 1562: "varbit",
	1563: "_varbit", 1700: "numeric", 1790: "refcursor", 2201: "_refcursor", 2202: "regprocedure",
	2203: "regoper", 2204: "regoperator", 2205: "regclass", 2206: "regtype", 2207: "_regprocedure",
	2208: "_regoper", 2209: "_regoperator", 2210: "_regclass", 2211: "_regtype", 2949: "_txid_snapshot",
	2950: "uuid", 2951: "_uuid", 2970: "txid_snapshot", 3220: "pg_lsn", 3221: "_pg_lsn", 3614: "tsvector",
	3615: "tsquery", 3643: "_tsvector", 3645: "_tsquery", 3734: "regconfig", 3735: "_regconfig",
	3769: "regdictionary", 3770: "_regdictionary", 3802: "jsonb", 3807: "_jsonb", 3904: "int4range",
	3905: "_int4range", 3906: "numrange", 3907: "_numrange", 3908: "tsrange", 3909: "_tsrange",
	3910: "tstzrange", 3911: "_tstzrange", 3912: "daterange", 3913: "_daterange", 3926: "int8range",
	3927: "_int8range", 4072: "jsonpath", 4073: "_jsonpath", 4089: "regnamespace", 4090: "_regnamespace",
	4096: "regrole", 4097: "_regrole", 4191: "regcollation", 4192: "_regcollation", 4451: "int4multirange",
	4532: "nummultirange", 4533: "tsmultirange", 4534: "tstzmultirange", 4535: "datemultirange",
	4536: "int8multirange", 5038: "pg_snapshot", 5039: "_pg_snapshot", 5069: "xid8",
	6150: "_int4multirange", 6151: "_nummultirange", 6152: "_tsmultirange", 6153: "_tstzmultirange",
	6155: "_datemultirange", 6157: "_int8multirange",
}
