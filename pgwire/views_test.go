package pgwire

import (
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/sqlrewrite"
)

func ordersSnapshot() *catalog.Snapshot {
	return catalog.Static(1, []*catalog.Relation{{
		OID: 16390, Schema: "sales", Name: "orders", Kind: 'r',
		// A dropped column once stood between customer and ssn: attnums
		// are not positions.
		Columns: []catalog.Column{{Name: "id", Num: 1}, {Name: "customer", Num: 2}, {Name: "ssn", Num: 4}, {Name: "amount", Num: 5}},
	}}, nil)
}

// The view sqlrewrite creates for a row-filtered table reports, per result
// column, the table's column when it is the bare column and nothing when
// it is masked.
func TestOriginOf(t *testing.T) {
	snap := ordersSnapshot()
	cases := []struct {
		create string
		want   viewOrigin
	}{
		{`CREATE OR REPLACE VIEW pg_temp.pgranger_rf_1 WITH (security_barrier = true) AS SELECT id, customer, regexp_replace(ssn, '\d', 'x', 'g') AS ssn, amount FROM sales.orders WHERE region = 'US'`,
			viewOrigin{table: 16390, attnums: []int16{1, 2, 0, 5}}},
		{`CREATE OR REPLACE VIEW pg_temp.pgranger_rf_2 WITH (security_barrier = true) AS SELECT id, NULL::text AS customer, ssn, NULL::numeric(12,2) AS amount FROM ONLY sales.orders TABLESAMPLE bernoulli (50) WHERE region = 'EU'`,
			viewOrigin{table: 16390, attnums: []int16{1, 0, 4, 0}}},
		// A column renamed by the wrapper is not the column.
		{`CREATE OR REPLACE VIEW pg_temp.pgranger_rf_3 WITH (security_barrier = true) AS SELECT id AS customer FROM sales.orders WHERE true`,
			viewOrigin{table: 16390, attnums: []int16{0}}},
		// A view read through its definition, or an unknown relation:
		// no single table to report.
		{`CREATE OR REPLACE VIEW pg_temp.pgranger_rf_4 WITH (security_barrier = true) AS SELECT id FROM (SELECT id FROM sales.orders) orders_view WHERE id > 1`,
			viewOrigin{attnums: []int16{0}}},
		{`CREATE OR REPLACE VIEW pg_temp.pgranger_rf_5 WITH (security_barrier = true) AS SELECT id FROM sales.missing WHERE id > 1`,
			viewOrigin{attnums: []int16{0}}},
		{`not sql`, viewOrigin{}},
	}
	for _, c := range cases {
		if got := originOf(c.create, snap); !reflect.DeepEqual(*got, c.want) {
			t.Errorf("originOf(%s) = %+v, want %+v", c.create, *got, c.want)
		}
	}
}

func TestMapOrigins(t *testing.T) {
	var vs viewSet
	rd := &pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{
		{Name: []byte("id"), TableOID: 900001, TableAttributeNumber: 1, DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1},
		{Name: []byte("ssn"), TableOID: 900001, TableAttributeNumber: 3, DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1},
		{Name: []byte("note"), TableOID: 16400, TableAttributeNumber: 2, DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1},
		{Name: []byte("amount"), TableOID: 900001, TableAttributeNumber: 4, DataTypeOID: 1700, DataTypeSize: -1, TypeModifier: 786438},
	}}
	encode := func() []byte {
		b, err := rd.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		return b[5:]
	}
	decode := func(body []byte) [][2]uint32 {
		var got pgproto3.RowDescription
		if err := got.Decode(body); err != nil {
			t.Fatal(err)
		}
		var out [][2]uint32
		for _, f := range got.Fields {
			out = append(out, [2]uint32{f.TableOID, uint32(f.TableAttributeNumber)})
		}
		return out
	}

	body := encode()
	vs.mapOrigins(body) // no views located: unchanged
	if got := decode(body); !reflect.DeepEqual(got, [][2]uint32{{900001, 1}, {900001, 3}, {16400, 2}, {900001, 4}}) {
		t.Errorf("without views: %v", got)
	}

	vs.missing(viewsNamed("pgranger_rf_1"))
	vs.created("pgranger_rf_1")
	vs.located("pgranger_rf_1", 900001, &viewOrigin{table: 16390, attnums: []int16{1, 2, 0, 5}})
	body = encode()
	vs.mapOrigins(body)
	if got := decode(body); !reflect.DeepEqual(got, [][2]uint32{{16390, 1}, {0, 0}, {16400, 2}, {16390, 5}}) {
		t.Errorf("mapped: %v", got)
	}
	if binary.BigEndian.Uint16(body) != 4 {
		t.Error("field count changed")
	}

	// A view that is gone (rolled back, DISCARD) maps nothing.
	vs.forget("pgranger_rf_1")
	body = encode()
	vs.mapOrigins(body)
	if got := decode(body); got[0] != [2]uint32{900001, 1} {
		t.Errorf("after forget: %v", got)
	}
	// An OID for a view not (or no longer) requested is not recorded.
	vs.located("pgranger_rf_9", 900002, &viewOrigin{table: 1, attnums: []int16{1}})
	if len(vs.oids) != 0 {
		t.Errorf("recorded a view that was never requested: %v", vs.oids)
	}
	// Truncated bodies are left alone.
	vs.missing(viewsNamed("pgranger_rf_1"))
	vs.located("pgranger_rf_1", 900001, &viewOrigin{table: 16390, attnums: []int16{1}})
	short := encode()[:10]
	vs.mapOrigins(short)
	if parseOIDRow([]byte{0, 1, 0, 0, 0, 6, '9', '0', '0', '0', '0', '1'}) != 900001 {
		t.Error("parseOIDRow")
	}
}

func viewsNamed(names ...string) []sqlrewrite.View {
	var out []sqlrewrite.View
	for _, n := range names {
		out = append(out, sqlrewrite.View{Name: n})
	}
	return out
}
