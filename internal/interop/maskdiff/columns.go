package maskdiff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Kind is what a column type is to Hive's mask UDFs.
type Kind int

const (
	KindString  Kind = iota // string, varchar(n), char(n): every mask
	KindInteger             // smallint, int, bigint: the digit masks
	KindDate                // date: the date masks
	KindOther               // types the UDFs do not take: NULL, but MASK_NONE
)

// Column is one PostgreSQL column type pgranger masks and the Hive type
// that stands for it.
type Column struct {
	PG     string // PostgreSQL type, as in CREATE TABLE (interop.HiveTypeOf names its Hive twin)
	Kind   Kind
	Weight int // share of the values of a run
	values func(r *rand.Rand, n int) []*string
	// insert turns the text parameter %s into a value of the column
	// ("" = %s::PG).
	insert string
}

// Columns are the column types of the differential: every type whose mask
// Hive's UDFs compute (text, varchar, char, the integers, date), and the
// types pgranger turns into NULL that have a Hive twin (numeric, the
// floating types, boolean, bytea, timestamps). PostgreSQL has no tinyint;
// varchar and bpchar without a length stand for Hive's string, timestamptz
// (read in UTC) for timestamp.
var Columns = []Column{
	{PG: "text", Kind: KindString, Weight: 900, values: strs(40)},
	{PG: "varchar(12)", Kind: KindString, Weight: 500, values: strs(12)},
	{PG: "varchar", Kind: KindString, Weight: 300, values: strs(40)},
	{PG: "char(1)", Kind: KindString, Weight: 200, values: strs(1)},
	{PG: "char(10)", Kind: KindString, Weight: 500, values: strs(10)},
	{PG: "char(40)", Kind: KindString, Weight: 500, values: strs(40)},
	{PG: "bpchar", Kind: KindString, Weight: 300, values: strs(40)},
	{PG: "smallint", Kind: KindInteger, Weight: 300, values: ints(math.MinInt16, math.MaxInt16)},
	{PG: "integer", Kind: KindInteger, Weight: 300, values: ints(math.MinInt32, math.MaxInt32)},
	{PG: "bigint", Kind: KindInteger, Weight: 400, values: ints(math.MinInt64, math.MaxInt64)},
	{PG: "date", Kind: KindDate, Weight: 500, values: Dates},
	{PG: "numeric(12,3)", Kind: KindOther, Weight: 150, values: func(r *rand.Rand, n int) []*string { return Decimals(r, n, 12, 3) }},
	{PG: "timestamp", Kind: KindOther, Weight: 150, values: Timestamps},
	{PG: "timestamptz", Kind: KindOther, Weight: 100, values: Timestamps},
	{PG: "real", Kind: KindOther, Weight: 100, values: func(r *rand.Rand, n int) []*string { return Floats(r, n, 32) }},
	{PG: "double precision", Kind: KindOther, Weight: 100, values: func(r *rand.Rand, n int) []*string { return Floats(r, n, 64) }},
	{PG: "boolean", Kind: KindOther, Weight: 50, values: Booleans},
	{PG: "bytea", Kind: KindOther, Weight: 50, values: Bytes, insert: "pg_catalog.convert_to(%s, 'UTF8')"},
}

func strs(maxLen int) func(r *rand.Rand, n int) []*string {
	return func(r *rand.Rand, n int) []*string { return Strings(r, n, maxLen) }
}

func ints(lo, hi int64) func(r *rand.Rand, n int) []*string {
	return func(r *rand.Rand, n int) []*string { return Integers(r, n, lo, hi) }
}

// ColumnOf finds a column by its PostgreSQL type.
func ColumnOf(pgType string) (Column, bool) {
	for _, c := range Columns {
		if c.PG == pgType {
			return c, true
		}
	}
	return Column{}, false
}

// Values draws n values of the column's type, in PostgreSQL's text.
func (c Column) Values(r *rand.Rand, n int) []*string { return c.values(r, n) }

// table is the name of the column's table in the test database.
func (c Column) table() string {
	return "maskdiff_" + strings.NewReplacer("(", "_", ")", "", ",", "_", " ", "_").Replace(c.PG)
}

func (c Column) insertExpr(param string) string {
	if c.insert != "" {
		return fmt.Sprintf(c.insert, param)
	}
	return param + "::" + c.PG
}

// customs are the CUSTOM value expressions' results for the rows: for a
// string column a string of its own (up to 40 code points, so that the
// cast back to varchar(n) and char(n) cuts it); for integers the value;
// for dates the value where it is written the same in both (years 1 to
// 9999); nil where CUSTOM is not compared.
func (c Column) customs(r *rand.Rand, vals []*string) []*string {
	out := make([]*string, len(vals))
	switch c.Kind {
	case KindString:
		s := Strings(r, len(vals)+2, 40)[2:]
		copy(out, s)
	case KindInteger:
		copy(out, vals)
	case KindDate:
		for i, v := range vals {
			if v != nil && !strings.HasSuffix(*v, " BC") && len(*v) == 10 {
				out[i] = v
			}
		}
	}
	return out
}

// comparable puts a PostgreSQL result and a Hive result (in PostgreSQL's
// text, interop.PGText) into one text: floating values as the shortest
// text of their value (Java and PostgreSQL spell them differently); the
// rest is compared as it is.
func (c Column) comparable(pg, hive *string) (*string, *string) {
	switch c.PG {
	case "real":
		return floatText(pg, 32), floatText(hive, 32)
	case "double precision":
		return floatText(pg, 64), floatText(hive, 64)
	}
	return pg, hive
}

func floatText(v *string, bits int) *string {
	if v == nil {
		return nil
	}
	f, err := strconv.ParseFloat(*v, bits)
	if err != nil {
		return v
	}
	return ptr(strconv.FormatFloat(f, 'g', -1, bits))
}

// PG is the date as PostgreSQL prints it (year 0 is 0001 BC).
func (d Date) PG() string {
	if d.Year <= 0 {
		return fmt.Sprintf("%04d-%02d-%02d BC", 1-d.Year, d.Month, d.Day)
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day)
}
