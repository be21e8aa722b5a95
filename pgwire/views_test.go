package pgwire

import (
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/sqlrewrite"
)

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
