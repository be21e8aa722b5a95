package yamlcatalog

import (
	"slices"
	"testing"

	"github.com/pgranger/pgranger/catalog"
)

// Table declarations: types map onto PostgreSQL's OIDs and spellings.
func TestResolveType(t *testing.T) {
	cases := []struct {
		in   string
		oid  uint32
		mod  int32
		name string
	}{
		{"integer", 23, -1, "integer"},
		{"INT", 23, -1, "integer"},
		{"numeric(12,2)", 1700, 12<<16 | 2 + 4, "numeric(12,2)"},
		{"decimal(10)", 1700, 10<<16 + 4, "numeric(10,0)"},
		{"varchar(20)", 1043, 24, "character varying(20)"},
		{"character varying", 1043, -1, "character varying"},
		{"char(24)", 1042, 28, "character(24)"},
		{"timestamp with time zone", 1184, -1, "timestamp with time zone"},
		{"double  precision", 701, -1, "double precision"},
		{"text[]", 1009, -1, "text[]"},
	}
	// The type table as it was written by hand before it used pgtype's
	// constants: every spelling keeps its OID and format_type name.
	handWritten := map[string]struct {
		oid  uint32
		name string
	}{
		"boolean": {16, "boolean"}, "bool": {16, "boolean"},
		"bytea": {17, "bytea"}, "name": {19, "name"},
		"bigint": {20, "bigint"}, "int8": {20, "bigint"},
		"smallint": {21, "smallint"}, "int2": {21, "smallint"},
		"integer": {23, "integer"}, "int": {23, "integer"}, "int4": {23, "integer"},
		"text": {25, "text"}, "oid": {26, "oid"}, "json": {114, "json"}, "xml": {142, "xml"},
		"real": {700, "real"}, "float4": {700, "real"},
		"double precision": {701, "double precision"}, "float8": {701, "double precision"}, "float": {701, "double precision"},
		"money": {790, "money"}, "inet": {869, "inet"}, "cidr": {650, "cidr"}, "macaddr": {829, "macaddr"},
		"date": {1082, "date"},
		"time": {1083, "time without time zone"}, "time without time zone": {1083, "time without time zone"},
		"timetz": {1266, "time with time zone"}, "time with time zone": {1266, "time with time zone"},
		"timestamp": {1114, "timestamp without time zone"}, "timestamp without time zone": {1114, "timestamp without time zone"},
		"timestamptz": {1184, "timestamp with time zone"}, "timestamp with time zone": {1184, "timestamp with time zone"},
		"interval": {1186, "interval"}, "uuid": {2950, "uuid"}, "jsonb": {3802, "jsonb"},
		"text[]": {1009, "text[]"}, "integer[]": {1007, "integer[]"}, "int[]": {1007, "integer[]"}, "int4[]": {1007, "integer[]"},
		"bigint[]": {1016, "bigint[]"}, "int8[]": {1016, "bigint[]"},
		"varchar": {1043, "character varying"}, "char": {1042, "character(1)"}, "numeric": {1700, "numeric"},
	}
	for in, want := range handWritten {
		oid, _, name, err := resolveType(in)
		if err != nil || oid != want.oid || name != want.name {
			t.Errorf("%s: %d %q %v, want %d %q", in, oid, name, err, want.oid, want.name)
		}
	}
	for in := range pgTypes {
		if _, ok := handWritten[in]; !ok {
			t.Errorf("%s: a new spelling; add it to this test", in)
		}
	}
	for _, c := range cases {
		oid, mod, name, err := resolveType(c.in)
		if err != nil || oid != c.oid || mod != c.mod || name != c.name {
			t.Errorf("%s: %d %d %q %v, want %d %d %q", c.in, oid, mod, name, err, c.oid, c.mod, c.name)
		}
	}
	if _, _, _, err := resolveType("frobnitz"); err == nil {
		t.Error("an unknown type should be an error")
	}
	for in, want := range map[string][2]string{
		"sales.orders": {"sales", "orders"}, "orders": {"public", "orders"}, `sales."Odd Orders"`: {"sales", "Odd Orders"},
		"Sales.Orders": {"sales", "orders"}, `"a.b".c`: {"a.b", "c"},
	} {
		s, n, err := splitQualified(in)
		if err != nil || s != want[0] || n != want[1] {
			t.Errorf("%s: %q %q %v", in, s, n, err)
		}
	}
}

// TestPGCatalogFunctionsMatchBuiltins: the name list a static catalog
// answers IsCatalogFunction from and catalog's embedded PostgreSQL 15
// builtins (functions, aggregates, window functions) name the same
// functions.
func TestPGCatalogFunctionsMatchBuiltins(t *testing.T) {
	got := slices.Sorted(slices.Values(PGCatalogFunctions()))
	want := catalog.Static(1, nil, nil).Builtins.FunctionNames()
	if !slices.Equal(got, want) {
		t.Errorf("pgcatalog_functions.txt has %d names, the embedded builtins %d", len(got), len(want))
	}
}
