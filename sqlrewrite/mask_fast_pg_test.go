package sqlrewrite

// The edges of the masks' fast paths (docs/masks.md, "The expressions"),
// compared with Hive's UDFs on the PostgreSQL of TestMaskPostgres: strings at
// the border between the ASCII path (translate) and the regex paths, and
// integers at every threshold of the width_bucket lookups.

import (
	"math"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// maskFastStrings are values of at most maxLen code points (0: any) around
// the ASCII path's edges: NULL; every ASCII character but NUL, alone and
// between letters; ASCII strings of 0 to 8 characters, and each of them
// with one non-ASCII character (2-, 3- and 4-byte, letters of each case, a
// digit, uncased, titlecase, modifier and combining characters, emoji,
// supplementary letters and digits) at every position, so at the start, at
// the end, inside the first 4 and inside the last 4; combining sequences;
// supplementary characters around the 4-unit split; spaces.
func maskFastStrings(maxLen int) []*string {
	out := []*string{nil}
	add := func(s string) {
		if maxLen == 0 || utf8.RuneCountInString(s) <= maxLen {
			out = append(out, &s)
		}
	}
	for c := rune(1); c < utf8.RuneSelf; c++ {
		add(string(c))
		add("a" + string(c) + "Z9")
	}
	bases := []string{"", "a", "Zb", "x9-", "AB 1", "a-b_c", "Q1w2E3", "Ab 9-Zz", "12345678"}
	odd := []string{"é", "É", "١", "漢", "\u0301", "ǅ", "ʰ", "Ａ", "😀", "𝐀", "𝟎"}
	for _, b := range bases {
		add(b)
		rs := []rune(b)
		for i := 0; i <= len(rs); i++ {
			for _, o := range odd {
				add(string(rs[:i]) + o + string(rs[i:]))
			}
		}
	}
	for _, s := range []string{"e\u0301", "Ae\u0301b\u0308cd", "abcde\u0301", "\u0301\u0301\u0301\u0301\u0301", "ab😀😀", "😀abcd",
		"abcd😀", "a😀b", "1234😀", "😀😀😀", "ǅungla", "ΣΑΣ", "Iıİi", "ﬁﬂ ß", "Ünïcødé ١٢٣ 漢字", "111-11-1111",
		" ", "  ", "ab  ", "  ab", "a b ", "1234 ", "     x", "\t\n", "-- --", "Clerk#000000951"} {
		add(s)
	}
	return out
}

// maskFastInts are, for a type of the given range, 0, ±1, the type's ends
// and their neighbours, and every 10^k - 1, 10^k, 10^k + 1 and their
// negations that the type holds.
func maskFastInts(lo, hi int64) []*string {
	vals := []int64{0, 1, -1, lo, lo + 1, lo + 2, hi, hi - 1, hi - 2}
	for p := int64(10); ; p *= 10 {
		vals = append(vals, p-1, p, p+1, -(p - 1), -p, -(p + 1))
		if p > math.MaxInt64/10 {
			break
		}
	}
	var out []*string
	for _, v := range vals {
		if v >= lo && v <= hi {
			s := strconv.FormatInt(v, 10)
			out = append(out, &s)
		}
	}
	return append(out, nil)
}

func maskTestFastPaths(t *testing.T, conn *pgx.Conn, o *maskOracle) {
	cols := []struct {
		name, pgType string
		vals         []*string
	}{
		{"text", "text", maskFastStrings(0)},
		{"varchar10", "varchar(10)", maskFastStrings(10)},
		{"char4", "char(4)", maskFastStrings(4)},
		{"char6", "char(6)", maskFastStrings(6)},
		{"char12", "char(12)", maskFastStrings(12)},
		{"bpchar", "bpchar", maskFastStrings(0)},
		{"int2", "smallint", maskFastInts(math.MinInt16, math.MaxInt16)},
		{"int4", "integer", maskFastInts(math.MinInt32, math.MaxInt32)},
		{"int8", "bigint", maskFastInts(math.MinInt64, math.MaxInt64)},
	}
	total, checked := 0, 0
	for _, c := range cols {
		n, err := maskCompare(t, conn, o, maskCmp{table: "mask_fast_" + c.name, pgType: c.pgType, vals: c.vals, deparse: true})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		total += len(c.vals)
		checked += n
	}
	t.Logf("fast paths: %d values, %d masked results compared with Hive (and with the pg_query-deparsed expressions)", total, checked)
}
