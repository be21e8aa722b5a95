package sqlrewrite

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pgranger/pgranger/internal/interop"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

var maskAllTypes = []string{ranger.MaskTypeMask, ranger.MaskTypeShowLast4, ranger.MaskTypeShowFirst4, ranger.MaskTypeHash, ranger.MaskTypeNull, ranger.MaskTypeDateShowYear}

// maskTestColumns are the column types the builder masks.
var maskTestColumns = map[string]ColumnType{
	"text":        {OID: 25, BaseOID: 25, TypMod: -1, SQLName: "text"},
	"varchar(20)": {OID: 1043, BaseOID: 1043, TypMod: 24, SQLName: "character varying(20)"},
	"varchar":     {OID: 1043, BaseOID: 1043, TypMod: -1, SQLName: "character varying"},
	"char(8)":     {OID: 1042, BaseOID: 1042, TypMod: 12, SQLName: "character(8)"},
	"bpchar":      {OID: 1042, BaseOID: 1042, TypMod: -1, SQLName: "bpchar"},
	"int2":        {OID: 21, BaseOID: 21, TypMod: -1, SQLName: "smallint"},
	"int4":        {OID: 23, BaseOID: 23, TypMod: -1, SQLName: "integer"},
	"int8":        {OID: 20, BaseOID: 20, TypMod: -1, SQLName: "bigint"},
	"date":        {OID: 1082, BaseOID: 1082, TypMod: -1, SQLName: "date"},
}

func TestMaskSQLErrors(t *testing.T) {
	col := maskTestColumns["text"]
	for _, m := range []string{ranger.MaskTypeNone, ranger.MaskTypeCustom} {
		_, err := MaskSQL(m, col, `"c"`, MaskOptions{})
		if !errors.Is(err, ErrMaskNotBuilt) || errors.Is(err, ErrUnmappableMask) {
			t.Errorf("%s: %v, want ErrMaskNotBuilt", m, err)
		}
	}
	for _, m := range []string{"MASK_FOO", "", "mask", "MASK_SHOW_LAST_8", "hive:MASK_HASH"} {
		if _, err := MaskSQL(m, col, `"c"`, MaskOptions{}); !errors.Is(err, ErrUnmappableMask) {
			t.Errorf("%q: %v, want ErrUnmappableMask", m, err)
		}
	}
	if _, err := MaskSQL(ranger.MaskTypeHash, col, `"c"`, MaskOptions{HashAlgo: "md5"}); err == nil || errors.Is(err, ErrUnmappableMask) {
		t.Errorf("md5: %v, want a configuration error", err)
	}
	// the algorithm only matters to MASK_HASH on strings
	if _, err := MaskSQL(ranger.MaskTypeMask, col, `"c"`, MaskOptions{HashAlgo: "md5"}); err != nil {
		t.Errorf("MASK with a bad hash option: %v", err)
	}
	for _, a := range []string{"", "sha256", "SHA512", " sha512 "} {
		if _, err := MaskSQL(ranger.MaskTypeHash, col, `"c"`, MaskOptions{HashAlgo: a}); err != nil {
			t.Errorf("hash algo %q: %v", a, err)
		}
	}
	if _, err := MaskSQL(ranger.MaskTypeMask, col, " ", MaskOptions{}); err == nil {
		t.Error("empty column reference accepted")
	}
	if _, err := MaskSQL(ranger.MaskTypeMask, ColumnType{OID: 99999, BaseOID: 99999, TypMod: -1}, `"c"`, MaskOptions{}); err == nil {
		t.Error("typed NULL without a type name accepted")
	}
}

func TestTypedNull(t *testing.T) {
	for _, tc := range []struct {
		col  ColumnType
		want string
	}{
		{ColumnType{OID: 1700, BaseOID: 1700, TypMod: 655366, SQLName: "numeric(10,2)"}, "NULL::pg_catalog.numeric"},
		{ColumnType{OID: 25, BaseOID: 25, TypMod: -1, SQLName: "text"}, "NULL::pg_catalog.text"},
		{ColumnType{OID: 1043, BaseOID: 1043, TypMod: 24, SQLName: "character varying(20)"}, "NULL::pg_catalog.varchar(20)"},
		{ColumnType{OID: 1042, BaseOID: 1042, TypMod: 12, SQLName: "character(8)"}, "NULL::pg_catalog.bpchar(8)"},
		{ColumnType{OID: 1042, BaseOID: 1042, TypMod: -1, SQLName: "bpchar"}, "(ARRAY[NULL]::pg_catalog._bpchar)[1]"},
		{ColumnType{OID: 18, BaseOID: 18, TypMod: -1, SQLName: `"char"`}, `NULL::pg_catalog."char"`},
		{ColumnType{OID: 1007, BaseOID: 1007, TypMod: -1, SQLName: "integer[]"}, "NULL::pg_catalog._int4"},
		{ColumnType{OID: 1014, BaseOID: 1014, TypMod: 7, SQLName: "character(3)[]"}, "NULL::pg_catalog._bpchar"},
		{ColumnType{OID: 16400, BaseOID: 16400, TypMod: -1, SQLName: "public.mood"}, "NULL::public.mood"},
		{ColumnType{OID: 16500, BaseOID: 25, TypMod: -1, SQLName: "public.dom"}, "NULL::public.dom"},
		{ColumnType{OID: 16501, BaseOID: 16501, TypMod: -1, SQLName: "public.mood[]"}, "NULL::public.mood[]"},
		{ColumnType{OID: 99999}, "NULL"},
	} {
		if got := TypedNull(tc.col); got != tc.want {
			t.Errorf("TypedNull(%+v) = %s, want %s", tc.col, got, tc.want)
		}
	}
}

// Types Hive's UDFs do not take, MASK_NULL, and MASK_HASH on numbers and
// dates are typed NULLs.
func TestMaskSQLTypedNulls(t *testing.T) {
	others := []ColumnType{
		{OID: 1700, BaseOID: 1700, TypMod: -1, SQLName: "numeric"},
		{OID: 701, BaseOID: 701, TypMod: -1, SQLName: "double precision"},
		{OID: 700, BaseOID: 700, TypMod: -1, SQLName: "real"},
		{OID: 16, BaseOID: 16, TypMod: -1, SQLName: "boolean"},
		{OID: 1114, BaseOID: 1114, TypMod: -1, SQLName: "timestamp without time zone"},
		{OID: 1184, BaseOID: 1184, TypMod: -1, SQLName: "timestamp with time zone"},
		{OID: 17, BaseOID: 17, TypMod: -1, SQLName: "bytea"},
		{OID: 3802, BaseOID: 3802, TypMod: -1, SQLName: "jsonb"},
		{OID: 2950, BaseOID: 2950, TypMod: -1, SQLName: "uuid"},
		{OID: 19, BaseOID: 19, TypMod: -1, SQLName: "name"},
		{OID: 18, BaseOID: 18, TypMod: -1, SQLName: `"char"`},
		{OID: 1009, BaseOID: 1009, TypMod: -1, SQLName: "text[]"},
		{OID: 16400, BaseOID: 16400, TypMod: -1, SQLName: "public.mood"},
		{OID: 16500, BaseOID: 25, TypMod: -1, SQLName: "public.dom_text"},  // domain over text
		{OID: 16501, BaseOID: 23, TypMod: -1, SQLName: "public.dom_int"},   // domain over integer
		{OID: 16502, BaseOID: 16502, TypMod: -1, SQLName: "public.citext"}, // extension type
	}
	for _, col := range others {
		for _, m := range maskAllTypes {
			got, err := MaskSQL(m, col, `"c"`, MaskOptions{})
			if err != nil || got != TypedNull(col) {
				t.Errorf("%s on %s: %q, %v; want %s", m, col.SQLName, got, err, TypedNull(col))
			}
		}
	}
	for name, col := range maskTestColumns {
		got, err := MaskSQL(ranger.MaskTypeNull, col, `"c"`, MaskOptions{})
		if err != nil || got != TypedNull(col) {
			t.Errorf("MASK_NULL on %s: %q, %v", name, got, err)
		}
		if strings.HasPrefix(name, "int") || name == "date" {
			got, err := MaskSQL(ranger.MaskTypeHash, col, `"c"`, MaskOptions{})
			if err != nil || got != TypedNull(col) {
				t.Errorf("MASK_HASH on %s: %q, %v", name, got, err)
			}
		}
	}
}

func TestMaskSQLShape(t *testing.T) {
	get := func(m, col string, opts MaskOptions) string {
		t.Helper()
		s, err := MaskSQL(m, maskTestColumns[col], `"ssn"`, opts)
		if err != nil {
			t.Fatalf("%s on %s: %v", m, col, err)
		}
		return s
	}
	expect := func(what, s string, parts ...string) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(s, p) {
				t.Errorf("%s: %q missing in\n%s", what, p, s)
			}
		}
	}
	s := get(ranger.MaskTypeMask, "text", MaskOptions{})
	expect("text MASK", s, `("ssn")`, `COLLATE pg_catalog."und-x-icu"`, "pg_catalog.translate(", // ASCII path
		// the general path never touches supplementary characters nor the
		// letters newer than Java 17's Unicode 13
		`E'(?![\\U00010000-\\U0010FFFF\\u1C89\\u1C8A\\u2C2F\\u2C5F\\uA7C0\\uA7C1\\uA7CB-\\uA7CD\\uA7D0\\uA7D1\\uA7D3\\uA7D5-\\uA7DC])[[:upper:]]'`,
		`'[[:upper:]]', 'X'`, `'[[:lower:]]', 'x'`, `'[[:digit:]]', 'n'`)
	if !strings.HasSuffix(s, `COLLATE pg_catalog."default"`) {
		t.Errorf("text MASK does not end with the default collation: %s", s)
	}
	s = get(ranger.MaskTypeShowLast4, "char(8)", MaskOptions{})
	expect("char(8) SHOW_LAST_4", s, `pg_catalog.rpad(("ssn")::pg_catalog.text, 8)`, "::pg_catalog.bpchar(8)",
		"pg_catalog.left(", "-4)", "pg_catalog.right(", `E'\\1\\1'`)
	s = get(ranger.MaskTypeShowFirst4, "varchar(20)", MaskOptions{})
	expect("varchar(20) SHOW_FIRST_4", s, "pg_catalog.substr(", ", 5)", "::pg_catalog.varchar(20)")
	s = get(ranger.MaskTypeHash, "varchar(20)", MaskOptions{})
	expect("varchar(20) HASH", s, "pg_catalog.sha256(pg_catalog.convert_to(", "'UTF8'", "'hex'", "::pg_catalog.varchar(20)")
	s = get(ranger.MaskTypeHash, "text", MaskOptions{HashAlgo: "sha512"})
	expect("text HASH sha512", s, "pg_catalog.sha512(")
	s = get(ranger.MaskTypeHash, "bpchar", MaskOptions{})
	expect("bpchar HASH", s, "::pg_catalog._bpchar)[1]")
	s = get(ranger.MaskTypeShowLast4, "int8", MaskOptions{})
	expect("int8 SHOW_LAST_4", s, "'-9223372036854775808'::pg_catalog.int8", "-1111111111111104192", "::pg_catalog.int8")
	s = get(ranger.MaskTypeShowFirst4, "int4", MaskOptions{})
	expect("int4 SHOW_FIRST_4", s, "2146888889", "::pg_catalog.int4")
	s = get(ranger.MaskTypeMask, "int2", MaskOptions{})
	expect("int2 MASK", s, "11111", "::pg_catalog.int2")
	s = get(ranger.MaskTypeMask, "date", MaskOptions{})
	expect("date MASK", s, "'0001-01-01 BC'::pg_catalog.date")
	s = get(ranger.MaskTypeDateShowYear, "date", MaskOptions{})
	expect("date SHOW_YEAR", s, "pg_catalog.isfinite(", "pg_catalog.make_date(", "'4713-01-01 BC'")
}

// The constants for each type's minimum are what Hive's UDFs return for
// it (their negation overflows inside Hive's loops).
func TestMaskIntMinimumConstants(t *testing.T) {
	hive := interop.HiveForTest(t)
	tr := map[string]string{}
	for _, mt := range policy.StockHiveServiceDef().DataMaskDef.MaskTypes {
		tr[mt.Name] = mt.Transformer
	}
	for oid, c := range map[uint32]struct {
		pgType string
		min    int64
	}{maskOIDInt2: {"smallint", math.MinInt16}, maskOIDInt4: {"integer", math.MinInt32}, maskOIDInt8: {"bigint", math.MinInt64}} {
		it := maskInts[oid]
		if it.min != strconv.FormatInt(c.min, 10) {
			t.Errorf("%s: min %s", c.pgType, it.min)
		}
		if d := len(strconv.FormatInt(c.min, 10)) - 1; d != it.digits {
			t.Errorf("%s: %d digits, builder says %d", c.pgType, d, it.digits)
		}
		for m, want := range map[string]string{ranger.MaskTypeShowLast4: it.minLast, ranger.MaskTypeShowFirst4: it.minFirst} {
			got, err := hive.MaskPG(context.Background(), interop.PGMaskRequest{Transformer: tr[m], PGType: c.pgType, Values: []*string{&it.min}})
			if err != nil {
				t.Fatal(err)
			}
			if got[0] == nil || *got[0] != want {
				t.Errorf("%s of %s %s: Hive %v, builder %s", m, c.pgType, it.min, got[0], want)
			}
		}
	}
}

// Every expression parses with pg_query (the rewriter splices the parse tree),
// its deparse is stable, and every function, operator, type and collation in
// it is qualified, so no session search_path can resolve a name to another
// object.
func TestMaskSQLParsesQualified(t *testing.T) {
	for name, col := range maskTestColumns {
		for _, m := range maskAllTypes {
			for _, opts := range []MaskOptions{{}, {HashAlgo: "sha512"}} {
				s, err := MaskSQL(m, col, `"c"`, opts)
				if err != nil {
					t.Fatalf("%s %s: %v", m, name, err)
				}
				tree, err := pg.Parse("SELECT " + s)
				if err != nil {
					t.Fatalf("%s %s does not parse: %v\n%s", m, name, err, s)
				}
				if n := len(tree.Stmts); n != 1 {
					t.Fatalf("%s %s: %d statements", m, name, n)
				}
				maskCheckQualified(t, m+" "+name, tree.Stmts[0].Stmt.ProtoReflect())
				d1, err := pg.Deparse(tree)
				if err != nil {
					t.Fatalf("%s %s: deparse: %v", m, name, err)
				}
				tree2, err := pg.Parse(d1)
				if err != nil {
					t.Fatalf("%s %s: deparsed text does not parse: %v\n%s", m, name, err, d1)
				}
				maskCheckQualified(t, m+" "+name+" (deparsed)", tree2.Stmts[0].Stmt.ProtoReflect())
				if d2, _ := pg.Deparse(tree2); d2 != d1 {
					t.Errorf("%s %s: deparse not stable:\n%s\n%s", m, name, d1, d2)
				}
			}
		}
	}
}

func maskCheckQualified(t *testing.T, what string, m protoreflect.Message) {
	t.Helper()
	names := func(ns []*pg.Node) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.GetString_().GetSval())
		}
		return out
	}
	check := func(kind string, ns []string) {
		if len(ns) < 2 || ns[0] != "pg_catalog" {
			t.Errorf("%s: unqualified %s %q", what, kind, strings.Join(ns, "."))
		}
	}
	switch v := m.Interface().(type) {
	case *pg.FuncCall:
		check("function", names(v.Funcname))
	case *pg.A_Expr:
		check("operator", names(v.Name))
	case *pg.TypeName:
		check("type", names(v.Names))
	case *pg.CollateClause:
		check("collation", names(v.Collname))
	case *pg.ColumnRef:
		if got := strings.Join(names(v.Fields), "."); got != "c" {
			t.Errorf("%s: column reference %q", what, got)
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, val protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := val.List()
			for i := 0; i < l.Len(); i++ {
				maskCheckQualified(t, what, l.Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			maskCheckQualified(t, what, val.Message())
		}
		return true
	})
}

// The spark dialect: Kyuubi's expressions (TestMaskTable in
// internal/interop checks their values against Spark); a type whose text
// Spark writes differently is a typed NULL, and MASK_DATE_SHOW_YEAR on a
// type Spark's date_trunc refuses cannot be built, so the query is denied.
func TestMaskSQLSparkDialect(t *testing.T) {
	spark := MaskOptions{Dialect: "spark"}
	text := ColumnType{OID: 25, TypMod: -1, SQLName: "text"}
	got, err := MaskSQL(ranger.MaskTypeHash, text, `"email"`, spark)
	if err != nil || got != `(pg_catalog.md5(("email")::pg_catalog.text)) COLLATE pg_catalog."default"` {
		t.Errorf("MASK_HASH: %q, %v", got, err)
	}
	if got, err := MaskSQL(ranger.MaskTypeMask, ColumnType{OID: 701, TypMod: -1, SQLName: "double precision"}, `"x"`, spark); err != nil || got != "NULL::pg_catalog.float8" {
		t.Errorf("MASK on float8: %q, %v", got, err)
	}
	if _, err := MaskSQL(ranger.MaskTypeDateShowYear, ColumnType{OID: 23, TypMod: -1, SQLName: "integer"}, `"x"`, spark); err == nil || !strings.Contains(err.Error(), "date_trunc") {
		t.Errorf("MASK_DATE_SHOW_YEAR on integer: %v, want an error naming date_trunc", err)
	}
	if got, _ := MaskSQL(ranger.MaskTypeMask, text, `"x"`, spark); strings.Contains(got, "und-x-icu") {
		t.Errorf("the spark dialect classifies ASCII only and needs no ICU: %s", got)
	}
	if _, err := MaskSQL(ranger.MaskTypeMask, text, `"x"`, MaskOptions{Dialect: "trino"}); err == nil {
		t.Error("an unknown dialect was accepted")
	}
	if d, err := ParseMaskDialect(""); err != nil || d != MaskDialectHive {
		t.Errorf(`"" is %q, %v; want hive`, d, err)
	}
}
