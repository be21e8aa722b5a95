package interop

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/pgranger/pgranger/internal/testrepo"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/sqlrewrite/maskref"
)

func str(s string) *string { return &s }

func show(p *string) string {
	if p == nil {
		return "NULL"
	}
	return strconv.Quote(*p)
}

// transformers are the hive service-def's: the oracle is given exactly the
// arguments Ranger's Hive plugin would call the UDFs with.
func transformers(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, mt := range policy.StockHiveServiceDef().DataMaskDef.MaskTypes {
		if mt.Transformer != "" {
			out[mt.Name] = mt.Transformer
		}
	}
	if len(out) != 5 {
		t.Fatalf("stock hive service-def: %d transformers, want 5", len(out))
	}
	return out
}

// hiveMask masks values with a Ranger mask type: through its transformer,
// or MASK_NULL / MASK_NONE, which call no UDF.
func hiveMask(t *testing.T, h *Hive, tr map[string]string, maskType, hiveType string, cast bool, values []*string) []*string {
	t.Helper()
	q := MaskRequest{Type: hiveType, Values: values, Cast: cast}
	if x, ok := tr[maskType]; ok {
		q.Transformer = x
	} else {
		q.MaskType = maskType
	}
	got, err := h.Mask(context.Background(), q)
	if err != nil {
		t.Fatalf("%s on %s: %v", maskType, hiveType, err)
	}
	return got
}

// TestHiveOracleKnownValues: values Hive's own q.out files and Ranger's
// documentation give, and the oracle's errors.
func TestHiveOracleKnownValues(t *testing.T) {
	h := HiveForTest(t)
	tr := transformers(t)
	cases := []struct {
		mask, typ string
		cast      bool
		in, want  *string
	}{
		{"MASK_SHOW_LAST_4", "string", false, str("111-11-1111"), str("xxx-xx-1111")},
		{"MASK_SHOW_FIRST_4", "string", false, str("111-11-1111"), str("111-xx-xxxx")},
		{"MASK", "string", false, str("abcd-EFGH-8765-4321"), str("xxxx-XXXX-nnnn-nnnn")},
		{"MASK_HASH", "string", false, str("abc"), str("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")},
		{"MASK_HASH", "varchar(10)", true, str("abc"), str("ba7816bf8f")},
		{"MASK", "char(6)", false, str("Ab1"), str("Xxn   ")},
		{"MASK", "int", false, str("-123"), str("-111")},
		{"MASK", "int", false, str("0"), str("0")},
		{"MASK_SHOW_LAST_4", "smallint", false, str("32767"), str("12767")},
		{"MASK", "date", false, str("2024-07-15"), str("0000-01-01")},
		{"MASK_DATE_SHOW_YEAR", "date", false, str("2024-07-15"), str("2024-01-01")},
		{"MASK", "decimal(10,2)", false, str("123.45"), nil},
		{"MASK_HASH", "bigint", false, str("12345"), nil},
		{"MASK", "string", false, nil, nil},
		{"MASK_NULL", "string", false, str("x"), nil},
		{"MASK_NONE", "char(4)", false, str("ab"), str("ab  ")},
	}
	for _, c := range cases {
		got := hiveMask(t, h, tr, c.mask, c.typ, c.cast, []*string{c.in})
		if show(got[0]) != show(c.want) {
			t.Errorf("%s on %s %s (cast %v): got %s, want %s", c.mask, c.typ, show(c.in), c.cast, show(got[0]), show(c.want))
		}
	}

	var oe *OracleError
	for _, c := range []struct {
		q    MaskRequest
		want string
	}{
		{MaskRequest{Transformer: "mask({col})", Type: "tinyint", Values: []*string{str("300")}}, "java.lang.IllegalArgumentException: value 0 (300) is out of range for tinyint"},
		{MaskRequest{Transformer: "mask({col})", Type: "date", Values: []*string{str("2024-02-30")}}, "java.lang.IllegalArgumentException: value 0 (2024-02-30) is not an ISO date (uuuu-MM-dd)"},
		{MaskRequest{Transformer: "mask_nothing({col})", Type: "string", Values: []*string{str("a")}}, "java.lang.IllegalArgumentException: unknown mask function mask_nothing"},
		{MaskRequest{Transformer: "mask({col}, x)", Type: "string", Values: []*string{str("a")}}, "java.lang.IllegalArgumentException: transformer mask({col}, x): argument x is neither an integer nor a quoted string"},
		{MaskRequest{MaskType: "CUSTOM", Type: "string", Values: []*string{str("a")}}, "java.lang.IllegalArgumentException: maskType CUSTOM calls a UDF: send its transformer instead"},
	} {
		_, err := h.Mask(context.Background(), c.q)
		if !errors.As(err, &oe) || oe.Message != c.want {
			t.Errorf("%+v: got %v, want %q", c.q, err, c.want)
		}
	}
}

// TestHiveOracleMaskExamples runs ../shared/ranger/mask-examples.json (the
// values Hive's UDFs are documented to return) through Hive itself.
func TestHiveOracleMaskExamples(t *testing.T) {
	path := testrepo.Shared(t, "ranger", "mask-examples.json")
	examples, err := maskref.ReadExamples(path)
	if err != nil {
		t.Fatal(err)
	}
	h := HiveForTest(t)
	tr := transformers(t)
	for _, e := range examples {
		in, err := e.InputText()
		if err != nil {
			t.Fatal(err)
		}
		want, err := e.ExpectedText()
		if err != nil {
			t.Fatal(err)
		}
		typ := map[string]string{"text": "string", "decimal": "decimal(10,2)"}[e.Type]
		if typ == "" {
			typ = e.Type
		}
		got := hiveMask(t, h, tr, e.Mask, typ, false, []*string{in})[0]
		if e.Config["hive.masking.algo"] != "" {
			// Hive 3.1.3 has no hive.masking.algo (HIVE-24456, Hive 4): it
			// always hashes with SHA-256.
			if want := maskref.Hash(*in, "sha256"); show(got) != show(&want) {
				t.Errorf("%s %s %s: got %s, want Hive 3's SHA-256 %s", e.Mask, typ, show(in), show(got), want)
			}
			continue
		}
		if show(got) != show(want) {
			t.Errorf("%s %s %s: Hive gives %s, the example says %s (%s)", e.Mask, typ, show(in), show(got), show(want), e.Why)
		}
	}
}

// hiveValues are the values each Hive type is masked with: every character
// class, the UTF-16 quirks (supplementary characters, CJK, titlecase,
// letters newer than Java 17's Unicode 13), the integer extremes, dates
// BC and leap days.
var hiveValues = map[string][]string{
	"string":        {"111-11-1111", "Hello World 123!", "abc", "", "Straße", "東京タワー1", "😀ab12", "ǅungla", "١٢٣-45", "ⅫX½", "Ⱟⱟ\uA7C0\uA7C1x", "éé\u0301É"},
	"varchar(6)":    {"abc", "abcdef", "12-34", "Ünï"},
	"char(6)":       {"ab", "Ab1", "abcdef", "12 "},
	"tinyint":       {"0", "7", "-128", "127", "12"},
	"smallint":      {"0", "-32768", "32767", "12345", "-5"},
	"int":           {"0", "5", "-2147483648", "2147483647", "123456", "-1000"},
	"bigint":        {"0", "-9223372036854775808", "9223372036854775807", "1234567890", "10000"},
	"date":          {"2024-07-15", "0001-01-01", "-0043-03-15", "9999-12-31", "2000-02-29", "0000-06-30"},
	"timestamp":     {"2024-07-15 10:11:12"},
	"decimal(10,2)": {"12345.67", "-1.50"},
	"double":        {"1.5", "-0.25"},
	"boolean":       {"true", "false"},
}

var maskTypes = []string{"MASK", "MASK_SHOW_LAST_4", "MASK_SHOW_FIRST_4", "MASK_HASH", "MASK_NULL", "MASK_NONE", "MASK_DATE_SHOW_YEAR"}

// TestHiveOracleAgainstMaskref masks every value of every Hive type with
// every Ranger mask type through Hive's UDFs, and compares with
// sqlrewrite/maskref: its Hive-level functions against the UDF's result,
// and maskref.Apply (the value pgranger's PostgreSQL returns) against the
// UDF's result cast back to the column type, as Ranger's Hive plugin casts
// it. The divergences must be exactly maskrefDivergences.
func TestHiveOracleAgainstMaskref(t *testing.T) {
	h := HiveForTest(t)
	tr := transformers(t)
	var found []string
	n := 0
	for _, typ := range sortedKeys(hiveValues) {
		values := hiveValues[typ]
		in := make([]*string, len(values)+1)
		for i := range values {
			in[i] = &values[i]
		}
		// and NULL
		for _, mt := range maskTypes {
			udf := hiveMask(t, h, tr, mt, typ, false, in)
			cast := hiveMask(t, h, tr, mt, typ, true, in)
			for i, v := range in {
				n++
				if want, ok := udfModel(mt, typ, v); !ok {
					t.Fatalf("no model for %s on %s", mt, typ)
				} else if show(want) != show(udf[i]) {
					found = append(found, fmt.Sprintf("udf | %s | %s | %s: maskref %s, Hive %s", mt, typ, show(v), show(want), show(udf[i])))
				}
				pg, err := applyModel(mt, typ, v)
				if err != nil {
					found = append(found, fmt.Sprintf("apply | %s | %s | %s: maskref error %q, Hive %s", mt, typ, show(v), err, show(cast[i])))
				} else if show(pg) != show(cast[i]) {
					found = append(found, fmt.Sprintf("apply | %s | %s | %s: maskref %s, Hive %s", mt, typ, show(v), show(pg), show(cast[i])))
				}
			}
		}
	}
	t.Logf("%d values × 2 (UDF, cast back) compared", n)
	for _, d := range found {
		t.Logf("maskref ≠ Hive: %s", d)
	}
	want := map[string]bool{}
	for _, d := range maskrefDivergences {
		want[d] = true
	}
	got := map[string]bool{}
	for _, d := range found {
		got[d] = true
		if !want[d] {
			t.Errorf("maskref diverges from Hive on a value not in maskrefDivergences (add it with its reason, or fix maskref):\n  %s", d)
		}
	}
	for _, d := range maskrefDivergences {
		if !got[d] {
			t.Errorf("maskref no longer diverges (strike it from maskrefDivergences):\n  %s", d)
		}
	}
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// A fixed order keeps the report stable.
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

var lenOf = regexp.MustCompile(`^(var)?char\((\d+)\)$`)

// hiveColumn is the maskref column of a Hive type.
func hiveColumn(typ string) maskref.Column {
	if m := lenOf.FindStringSubmatch(typ); m != nil {
		n, _ := strconv.Atoi(m[2])
		if m[1] == "var" {
			return maskref.Column{Kind: maskref.KindVarchar, Len: n}
		}
		return maskref.Column{Kind: maskref.KindChar, Len: n}
	}
	return maskref.ExampleColumn(typ)
}

// isoDate prints a maskref date as the oracle does (ISO, year 0 "0000").
func isoDate(d maskref.Date) string {
	if d.Year < 0 {
		return fmt.Sprintf("-%04d-%02d-%02d", -d.Year, d.Month, d.Day)
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day)
}

// udfModel is maskref's prediction of the UDF's own result (no cast).
func udfModel(mt, typ string, v *string) (*string, bool) {
	if v == nil || mt == "MASK_NULL" {
		return nil, true
	}
	col := hiveColumn(typ)
	s := *v
	switch col.Kind {
	case maskref.KindText, maskref.KindVarchar, maskref.KindChar:
		if col.Kind == maskref.KindChar {
			s = maskref.PadChar(s, col.Len)
		}
		switch mt {
		case "MASK":
			s = maskref.Mask(s)
		case "MASK_SHOW_LAST_4":
			s = maskref.ShowLast4(s)
		case "MASK_SHOW_FIRST_4":
			s = maskref.ShowFirst4(s)
		case "MASK_HASH":
			s = maskref.Hash(s, "sha256")
		case "MASK_DATE_SHOW_YEAR":
			s = maskref.DateShowYearString(s)
		case "MASK_NONE":
		default:
			return nil, false
		}
		return &s, true
	case maskref.KindTinyint, maskref.KindSmallint, maskref.KindInteger, maskref.KindBigint:
		w := map[maskref.Kind]maskref.Width{maskref.KindTinyint: maskref.Tinyint, maskref.KindSmallint: maskref.Smallint,
			maskref.KindInteger: maskref.Int, maskref.KindBigint: maskref.Bigint}[col.Kind]
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, false
		}
		switch mt {
		case "MASK", "MASK_DATE_SHOW_YEAR":
			n = maskref.MaskInt1(n, w)
		case "MASK_SHOW_LAST_4":
			n = maskref.ShowLast4Int(n, w)
		case "MASK_SHOW_FIRST_4":
			n = maskref.ShowFirst4Int(n, w)
		case "MASK_HASH":
			return nil, true
		case "MASK_NONE":
		default:
			return nil, false
		}
		out := strconv.FormatInt(n, 10)
		return &out, true
	case maskref.KindDate:
		d, err := maskref.ParseDate(s)
		if err != nil {
			return nil, false
		}
		switch mt {
		case "MASK", "MASK_SHOW_LAST_4", "MASK_SHOW_FIRST_4":
			d = maskref.MaskDateDefault(d)
		case "MASK_DATE_SHOW_YEAR":
			d = maskref.DateShowYear(d)
		case "MASK_HASH":
			return nil, true
		case "MASK_NONE":
		default:
			return nil, false
		}
		out := isoDate(d)
		return &out, true
	}
	// Types the UDFs do not take: NULL, except MASK_NONE, which is no UDF.
	if mt == "MASK_NONE" {
		return v, true
	}
	return nil, true
}

// applyModel is maskref.Apply in the oracle's text form (ISO dates).
func applyModel(mt, typ string, v *string) (*string, error) {
	col := hiveColumn(typ)
	in := v
	if v != nil && col.Kind == maskref.KindDate {
		d, err := maskref.ParseDate(*v)
		if err != nil {
			return nil, err
		}
		pg := maskref.FormatPGDate(d)
		in = &pg
	}
	out, err := maskref.Apply(mt, col, in, maskref.Options{})
	if err != nil || out == nil || col.Kind != maskref.KindDate {
		return out, err
	}
	d, err := maskref.ParseDate(*out)
	if err != nil {
		return nil, err
	}
	iso := isoDate(d)
	return &iso, nil
}

// maskrefDivergences are the values where sqlrewrite/maskref does not
// predict what Hive 3.1.3's UDFs (on Java 17) return, as
// "udf|apply | mask type | Hive type | value: maskref …, Hive …".
var maskrefDivergences = []string{
	// Letters that Unicode 14 added (U+2C2F, U+2C5F, U+A7C0, U+A7C1):
	// Java 17's Character.getType (Unicode 13) has them unassigned, so Hive
	// keeps them; maskref classifies with Go's Unicode 15 tables and masks
	// them as upper and lower case letters. Hive on Java 21 (Unicode 15)
	// would agree with maskref.
	"udf | MASK | string | \"ⰯⱟꟀꟁx\": maskref \"XxXxx\", Hive \"ⰯⱟꟀꟁx\"",
	"apply | MASK | string | \"ⰯⱟꟀꟁx\": maskref \"XxXxx\", Hive \"ⰯⱟꟀꟁx\"",
	"udf | MASK_SHOW_LAST_4 | string | \"ⰯⱟꟀꟁx\": maskref \"xⱟꟀꟁx\", Hive \"ⰯⱟꟀꟁx\"",
	"apply | MASK_SHOW_LAST_4 | string | \"ⰯⱟꟀꟁx\": maskref \"xⱟꟀꟁx\", Hive \"ⰯⱟꟀꟁx\"",
	"udf | MASK_DATE_SHOW_YEAR | string | \"ⰯⱟꟀꟁx\": maskref \"xxxxx\", Hive \"ⰯⱟꟀꟁx\"",
	"apply | MASK_DATE_SHOW_YEAR | string | \"ⰯⱟꟀꟁx\": maskref \"xxxxx\", Hive \"ⰯⱟꟀꟁx\"",

	// MASK_NONE calls no UDF: Hive keeps the value of every type. maskref's
	// Apply answers NULL for the types the mask UDFs do not take, as if a
	// UDF had been called.
	"apply | MASK_NONE | boolean | \"true\": maskref NULL, Hive \"true\"",
	"apply | MASK_NONE | boolean | \"false\": maskref NULL, Hive \"false\"",
	"apply | MASK_NONE | decimal(10,2) | \"12345.67\": maskref NULL, Hive \"12345.67\"",
	"apply | MASK_NONE | decimal(10,2) | \"-1.50\": maskref NULL, Hive \"-1.50\"",
	"apply | MASK_NONE | double | \"1.5\": maskref NULL, Hive \"1.5\"",
	"apply | MASK_NONE | double | \"-0.25\": maskref NULL, Hive \"-0.25\"",
	"apply | MASK_NONE | timestamp | \"2024-07-15 10:11:12\": maskref NULL, Hive \"2024-07-15 10:11:12\"",
}
