// Package maskref is a reference implementation, in plain Go, of the Apache
// Hive mask UDFs that the transformers of Apache Ranger's hive service-def
// call (mask, mask_show_last_n, mask_show_first_n, mask_hash), operating on
// values the way Hive does:
//
//   - strings are sequences of UTF-16 code units, each classified by Java's
//     Character.getType (approximated with Go's Unicode tables): Lu, Ll and Nd
//     are replaced, everything else — including both halves of a surrogate
//     pair — is kept or replaced by the "other" argument;
//   - lengths and split points are counted in UTF-16 code units;
//   - integers are computed in the column's own width (tinyint, smallint,
//     int, bigint) with Java's wrapping arithmetic, so the quirks of Hive's
//     loops at the extremes (for example Long.MIN_VALUE, whose negation
//     overflows) are reproduced exactly;
//   - dates are proleptic Gregorian (year, month, day) with ISO year
//     numbering, so year 0 is 1 BC;
//   - mask_hash is the lower-case hex SHA-256 (or SHA-512) of the UTF-8 bytes.
//
// The Hive-level functions (MaskString, ShowLastNString, MaskInt, MaskDate,
// Hash, …) take every UDF argument. The Ranger-level helpers (Mask,
// ShowLast4, …) fix the arguments the hive service-def passes. Apply, in
// apply.go, adds the PostgreSQL side: it predicts the text PostgreSQL prints
// for a masked column of pgranger, including the cast back to the column type
// Hive applies and the choices pgranger made where PostgreSQL and Hive differ
// (dates BC, ±infinity).
//
// The package is the oracle of pgranger's mask tests and backs predictions of
// masked values; it is not used to mask data (the proxy masks in SQL).
package maskref

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf16"
)

// Keep is the value of a character or date-field argument that means "retain
// the original" (Hive's UNMASKED_VAL, -1).
const Keep = -1

// Class is the category of one UTF-16 code unit that Hive's transformChar
// switches on (Java's Character.getType).
type Class int

const (
	ClassOther Class = iota // everything else: punctuation, spaces, Lo, Lt, Lm, marks, surrogates, …
	ClassUpper              // UPPERCASE_LETTER (Lu)
	ClassLower              // LOWERCASE_LETTER (Ll)
	ClassDigit              // DECIMAL_DIGIT_NUMBER (Nd), any script
)

// ClassOf classifies one UTF-16 code unit. A surrogate (either half of a
// supplementary character) is ClassOther, as Character.getType(char) returns
// SURROGATE for it, so letters and digits above U+FFFF are never classes
// Upper/Lower/Digit.
func ClassOf(u uint16) Class {
	r := rune(u)
	if utf16.IsSurrogate(r) {
		return ClassOther
	}
	switch {
	case unicode.Is(unicode.Lu, r):
		return ClassUpper
	case unicode.Is(unicode.Ll, r):
		return ClassLower
	case unicode.Is(unicode.Nd, r):
		return ClassDigit
	}
	return ClassOther
}

// Chars are the replacement arguments of Hive's mask functions: a code point
// for each class, or Keep.
type Chars struct {
	Upper, Lower, Digit, Other int
}

// MaskDefaults are mask()'s defaults: 'X', 'x', 'n', keep. Ranger's MASK
// calls mask({col}) with them.
var MaskDefaults = Chars{Upper: 'X', Lower: 'x', Digit: 'n', Other: Keep}

// RangerChars are the arguments Ranger passes to mask_show_last_n,
// mask_show_first_n and (for MASK_DATE_SHOW_YEAR) mask: 'x', 'x', 'x', -1.
var RangerChars = Chars{Upper: 'x', Lower: 'x', Digit: 'x', Other: Keep}

// transformChar is Hive's MaskTransformer.transformChar for one unit: the
// code point to append.
func (c Chars) transformChar(u uint16) int {
	var rep int
	switch ClassOf(u) {
	case ClassUpper:
		rep = c.Upper
	case ClassLower:
		rep = c.Lower
	case ClassDigit:
		rep = c.Digit
	default:
		rep = c.Other
	}
	if rep == Keep {
		return int(u)
	}
	return rep
}

// appendCodePoint is Java's StringBuilder.appendCodePoint on UTF-16 units: a
// BMP value (including a lone surrogate unit) is one unit, a supplementary
// one two.
func appendCodePoint(out []uint16, cp int) []uint16 {
	if cp >= 0x10000 {
		r1, r2 := utf16.EncodeRune(rune(cp))
		return append(out, uint16(r1), uint16(r2))
	}
	return append(out, uint16(cp))
}

// units returns s as UTF-16 code units (Java's String).
func units(s string) []uint16 { return utf16.Encode([]rune(s)) }

// fromUnits turns UTF-16 code units back into a Go string. Pairs are never
// split by the transformers with Other = Keep; a lone surrogate (possible only
// when Other replaces one half of a pair) becomes U+FFFD, as it has no UTF-8
// form.
func fromUnits(u []uint16) string { return string(utf16.Decode(u)) }

// UTF16Len is the length of s as Java counts it (String.length()).
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// MaskString is MaskTransformer.transform(String): every unit transformed.
func MaskString(s string, c Chars) string {
	in := units(s)
	out := make([]uint16, 0, len(in))
	for _, u := range in {
		out = appendCodePoint(out, c.transformChar(u))
	}
	return fromUnits(out)
}

// ShowLastNString is MaskShowLastNTransformer.transform(String): a value of
// at most n units is returned unchanged; otherwise the first len-n units are
// transformed and the last n kept. n < 0 counts as 0.
func ShowLastNString(s string, n int, c Chars) string {
	if n < 0 {
		n = 0
	}
	in := units(s)
	if len(in) <= n {
		return s
	}
	end := len(in) - n
	out := make([]uint16, 0, len(in))
	for i, u := range in {
		if i < end {
			out = appendCodePoint(out, c.transformChar(u))
		} else {
			out = append(out, u)
		}
	}
	return fromUnits(out)
}

// ShowFirstNString is MaskShowFirstNTransformer.transform(String): a value of
// at most n units is returned unchanged; otherwise the first n units are kept
// and the rest transformed. n < 0 counts as 0.
func ShowFirstNString(s string, n int, c Chars) string {
	if n < 0 {
		n = 0
	}
	in := units(s)
	if len(in) <= n {
		return s
	}
	out := make([]uint16, 0, len(in))
	for i, u := range in {
		if i < n {
			out = append(out, u)
		} else {
			out = appendCodePoint(out, c.transformChar(u))
		}
	}
	return fromUnits(out)
}

// Hash is MaskHashTransformer.transform(String): DigestUtils.sha256Hex, or
// sha512Hex when algo is "sha512" (compared as Hive does: trimmed, case
// insensitive; any other value means SHA-256).
func Hash(s string, algo string) string {
	if strings.EqualFold(strings.TrimSpace(algo), "sha512") {
		h := sha512.Sum512([]byte(s))
		return hex.EncodeToString(h[:])
	}
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// PadChar is HiveBaseChar.getPaddedValue: the value of a CHAR(n) as the mask
// UDFs see it, padded with spaces to n code points (or cut to n code points
// if longer). n < 0 returns s.
func PadChar(s string, n int) string {
	if n < 0 {
		return s
	}
	l := len([]rune(s))
	if l > n {
		return TruncateChars(s, n)
	}
	return s + strings.Repeat(" ", n-l)
}

// TruncateChars is HiveBaseChar.enforceMaxLength: s cut to n code points
// (n <= 0 means no limit). Hive applies it when it casts a mask result back
// to VARCHAR(n) or CHAR(n).
func TruncateChars(s string, n int) string {
	if n <= 0 {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// Mask is Ranger's MASK on a string: mask({col}).
func Mask(s string) string { return MaskString(s, MaskDefaults) }

// ShowLast4 is Ranger's MASK_SHOW_LAST_4 on a string:
// mask_show_last_n({col}, 4, 'x', 'x', 'x', -1, '1').
func ShowLast4(s string) string { return ShowLastNString(s, 4, RangerChars) }

// ShowFirst4 is Ranger's MASK_SHOW_FIRST_4 on a string:
// mask_show_first_n({col}, 4, 'x', 'x', 'x', -1, '1').
func ShowFirst4(s string) string { return ShowFirstNString(s, 4, RangerChars) }

// DateShowYearString is Ranger's MASK_DATE_SHOW_YEAR applied to a string
// column: mask({col}, 'x', 'x', 'x', -1, '1', 1, 0, -1) turns every Lu, Ll
// and Nd unit into 'x'.
func DateShowYearString(s string) string { return MaskString(s, RangerChars) }
