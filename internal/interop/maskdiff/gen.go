package maskdiff

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// categories are the Unicode general categories strings are drawn from,
// each with the same weight whatever its size, so that a category of a
// dozen characters (Zl, Zp, Me) turns up as often as Lo. Cs, the
// surrogates, cannot be in a PostgreSQL string (nor in valid UTF-8); Java
// still meets them, as the two halves of every character above U+FFFF.
// Cn, the unassigned code points, is drawn by unassigned().
var categories = []string{"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
	"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn"}

// newer are the letters and digits of the Basic Multilingual Plane that
// Unicode 14 to 16 added: Java 17 (Unicode 13) has them unassigned, the
// ICU of a current PostgreSQL has them as letters. They are unassigned to
// Go's tables too where Go's Unicode is older than theirs, so they get a
// pool of their own (docs/masks.md, "Characters are Java 17's").
var newer = []rune{0x1C89, 0x1C8A, 0x2C2F, 0x2C5F, 0xA7C0, 0xA7C1, 0xA7CB, 0xA7CC, 0xA7CD,
	0xA7D0, 0xA7D1, 0xA7D3, 0xA7D5, 0xA7D6, 0xA7D7, 0xA7D8, 0xA7D9, 0xA7DA, 0xA7DB, 0xA7DC}

// table is a category's code points as cumulative counts over its ranges,
// for a uniform draw.
type table struct {
	lo, hi []rune
	cum    []int
}

var tables = func() map[string]*table {
	out := map[string]*table{}
	for _, name := range categories {
		rt := unicode.Categories[name]
		if rt == nil {
			continue
		}
		t := &table{}
		n := 0
		add := func(lo, hi, stride rune) {
			if stride == 1 {
				t.lo, t.hi = append(t.lo, lo), append(t.hi, hi)
				n += int(hi-lo) + 1
				t.cum = append(t.cum, n)
				return
			}
			for c := lo; c <= hi; c += stride {
				t.lo, t.hi = append(t.lo, c), append(t.hi, c)
				n++
				t.cum = append(t.cum, n)
			}
		}
		for _, r := range rt.R16 {
			add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
		for _, r := range rt.R32 {
			add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
		out[name] = t
	}
	return out
}()

func (t *table) draw(r *rand.Rand) rune {
	k := r.IntN(t.cum[len(t.cum)-1])
	i := sort.SearchInts(t.cum, k+1)
	base := 0
	if i > 0 {
		base = t.cum[i-1]
	}
	return t.lo[i] + rune(k-base)
}

// storable: PostgreSQL's text holds every scalar value but NUL.
func storable(c rune) bool {
	return c != 0 && utf8.ValidRune(c)
}

// unassigned draws a code point no category of Go's tables has, half the
// time in the Basic Multilingual Plane; now and then one of newer.
func unassigned(r *rand.Rand) rune {
	if r.IntN(8) == 0 {
		return newer[r.IntN(len(newer))]
	}
	for {
		var c rune
		if r.IntN(2) == 0 {
			c = rune(r.IntN(0x10000))
		} else {
			c = 0x10000 + rune(r.IntN(0x100000))
		}
		if !storable(c) || unicode.Is(unicode.Cs, c) {
			continue
		}
		assigned := false
		for _, name := range categories[:len(categories)-1] {
			if unicode.Is(unicode.Categories[name], c) {
				assigned = true
				break
			}
		}
		if !assigned {
			return c
		}
	}
}

// anyRune draws a category, then a code point of it.
func anyRune(r *rand.Rand) rune {
	for {
		name := categories[r.IntN(len(categories))]
		var c rune
		if name == "Cn" {
			c = unassigned(r)
		} else {
			c = tables[name].draw(r)
		}
		if storable(c) {
			return c
		}
	}
}

const asciiPrintable = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

// splitRunes are characters for the edges of the 4-unit split of the SHOW
// masks: ASCII and BMP letters and digits (one UTF-16 unit each) and
// supplementary ones (two units).
var splitRunes = []rune{'a', 'Z', '7', ' ', '-', 'é', 'Ω', '١', '漢', 0x1F600, 0x1D400, 0x1D7CE, 0x10400, 0x104A0, 0x20000}

// Strings makes n values of at most maxLen code points: a NULL, the empty
// string, then a mix of styles: printable ASCII (the masks' fast path),
// any character of any general category, ASCII with a few such characters,
// combining sequences, runs around the 4-unit split with supplementary
// characters, and trailing spaces.
func Strings(r *rand.Rand, n, maxLen int) []*string {
	out := []*string{nil, ptr("")}
	for len(out) < n {
		l := r.IntN(maxLen + 1)
		var b strings.Builder
		switch k := r.IntN(20); {
		case k < 5: // printable ASCII
			for range l {
				b.WriteByte(asciiPrintable[r.IntN(len(asciiPrintable))])
			}
		case k < 12: // any category
			for range l {
				b.WriteRune(anyRune(r))
			}
		case k < 15: // ASCII with a few others
			for range l {
				if r.IntN(5) == 0 {
					b.WriteRune(anyRune(r))
				} else {
					b.WriteByte(asciiPrintable[r.IntN(len(asciiPrintable))])
				}
			}
		case k < 17: // combining sequences
			for i := 0; i < l; {
				b.WriteRune(tables[[]string{"Lu", "Ll", "Lo", "Nd"}[r.IntN(4)]].draw(r))
				i++
				for m := r.IntN(3); m > 0 && i < l; m-- {
					b.WriteRune(tables[[]string{"Mn", "Mc", "Me"}[r.IntN(3)]].draw(r))
					i++
				}
			}
		case k < 19: // short runs at the split, with supplementary characters
			for range min(l, 1+r.IntN(7)) {
				b.WriteRune(splitRunes[r.IntN(len(splitRunes))])
			}
		default: // trailing spaces
			for range max(0, l-2) {
				b.WriteRune(anyRune(r))
			}
			if l > 0 {
				b.WriteString(strings.Repeat(" ", min(2, l)))
			}
		}
		out = append(out, ptr(b.String()))
	}
	return out
}

// Integers makes n values of a signed integer type of the given range: a
// NULL, 0, ±1, each power of ten and its neighbours, the ends of the range
// and their neighbours, then random values of a random number of digits.
func Integers(r *rand.Rand, n int, lo, hi int64) []*string {
	out := []*string{nil}
	add := func(v int64) {
		if v >= lo && v <= hi {
			out = append(out, ptr(strconv.FormatInt(v, 10)))
		}
	}
	for _, v := range []int64{0, 1, -1, lo, lo + 1, lo + 2, hi, hi - 1, hi - 2, lo / 10, hi / 10} {
		add(v)
	}
	for p := int64(10); ; p *= 10 {
		for _, v := range []int64{p - 1, p, p + 1} {
			add(v)
			add(-v)
		}
		if p > math.MaxInt64/10 {
			break
		}
	}
	digits := len(strconv.FormatInt(hi, 10))
	for len(out) < n {
		d := 1 + r.IntN(digits)
		var v int64
		if d == digits {
			v = int64(r.Uint64() >> 1)
			if hi < math.MaxInt64 {
				v %= hi + 1
			}
		} else {
			p := int64(1)
			for range d - 1 {
				p *= 10
			}
			v = p + r.Int64N(9*p)
			if d == 1 {
				v = r.Int64N(10)
			}
		}
		if r.IntN(2) == 0 {
			v = -v
		}
		add(v)
	}
	return out[:n]
}

// Date is a proleptic Gregorian date; Year is ISO (0 is 1 BC).
type Date struct{ Year, Month, Day int }

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// PostgreSQL's calendar: 4714-11-24 BC (ISO -4713) to 5874897-12-31.
const (
	pgFirstYear = -4713
	pgLastYear  = 5874897
)

// Dates makes n dates both PostgreSQL and Hive hold, in PostgreSQL's text:
// the ends of PostgreSQL's calendar, the years around the eras, leap days,
// years of more than four digits, then random dates, one in ten BC and
// one in ten after 9999.
func Dates(r *rand.Rand, n int) []*string {
	out := []*string{nil}
	for _, d := range []Date{{-4713, 11, 24}, {-4713, 12, 31}, {-4712, 1, 1}, {-43, 3, 15}, {0, 2, 29}, {0, 12, 31},
		{1, 1, 1}, {1970, 1, 1}, {2000, 2, 29}, {2024, 7, 15}, {9999, 12, 31}, {10000, 1, 1}, {294276, 12, 31}, {pgLastYear, 12, 31}} {
		out = append(out, ptr(d.PG()))
	}
	for len(out) < n {
		var y int
		switch r.IntN(10) {
		case 0:
			y = pgFirstYear + 1 + r.IntN(-pgFirstYear) // BC, and year 0
		case 1:
			y = 10000 + r.IntN(pgLastYear-10000)
		default:
			y = 1 + r.IntN(9999)
		}
		m := 1 + r.IntN(12)
		out = append(out, ptr(Date{y, m, 1 + r.IntN(daysIn(y, m))}.PG()))
	}
	return out[:n]
}

// Timestamps makes n timestamps of years 1 to 9999 with microseconds, in
// the text both print.
func Timestamps(r *rand.Rand, n int) []*string {
	out := []*string{nil, ptr("1970-01-01 00:00:00"), ptr("9999-12-31 23:59:59.999999"), ptr("0001-01-01 00:00:00"), ptr("2000-02-29 12:30:00.5")}
	for len(out) < n {
		y, m := 1+r.IntN(9999), 1+r.IntN(12)
		s := Date{y, m, 1 + r.IntN(daysIn(y, m))}.PG() + " " + pad2(r.IntN(24)) + ":" + pad2(r.IntN(60)) + ":" + pad2(r.IntN(60))
		if us := r.IntN(1000000); r.IntN(2) == 0 && us > 0 {
			s += strings.TrimRight("."+strconv.Itoa(1000000 + us)[1:], "0")
		}
		out = append(out, ptr(s))
	}
	return out[:n]
}

func pad2(v int) string { return strconv.Itoa(100 + v)[1:] }

// Decimals makes n values of numeric(p, s).
func Decimals(r *rand.Rand, n, p, s int) []*string {
	out := []*string{nil, ptr("0." + strings.Repeat("0", s))}
	for len(out) < n {
		ip := strconv.FormatInt(r.Int64N(int64(math.Pow10(p-s))), 10)
		fp := strconv.FormatInt(int64(math.Pow10(s))+r.Int64N(int64(math.Pow10(s))), 10)[1:]
		v := ip + "." + fp
		if r.IntN(2) == 0 {
			v = "-" + v
		}
		out = append(out, ptr(v))
	}
	return out[:n]
}

// Floats makes n values of a floating type of the given bits: specials,
// then values of random magnitude, printed as Go's shortest form.
func Floats(r *rand.Rand, n, bits int) []*string {
	out := []*string{nil, ptr("0"), ptr("NaN"), ptr("Infinity"), ptr("-Infinity"), ptr("1.5"), ptr("-0.25")}
	for len(out) < n {
		v := (r.Float64()*2 - 1) * math.Pow(10, float64(r.IntN(40)-20))
		out = append(out, ptr(strconv.FormatFloat(v, 'g', -1, bits)))
	}
	return out[:n]
}

// Booleans makes n booleans in PostgreSQL's text.
func Booleans(r *rand.Rand, n int) []*string {
	out := []*string{nil}
	for len(out) < n {
		out = append(out, ptr([]string{"t", "f"}[r.IntN(2)]))
	}
	return out
}

// Bytes makes n byte strings of printable ASCII other than the backslash
// (the text is the bytes, on both sides).
func Bytes(r *rand.Rand, n int) []*string {
	out := []*string{nil, ptr("")}
	for len(out) < n {
		var b strings.Builder
		for range r.IntN(20) {
			c := asciiPrintable[r.IntN(len(asciiPrintable))]
			if c != '\\' {
				b.WriteByte(c)
			}
		}
		out = append(out, ptr(b.String()))
	}
	return out[:n]
}

func ptr(s string) *string { return &s }
