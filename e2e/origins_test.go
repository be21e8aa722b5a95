package e2e

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
)

// RowDescription reports each result column's origin (table OID, column
// number); clients show it (JDBC's ResultSetMetaData.getTableName and
// isNullable, psycopg2's Column.table_oid, node-postgres' tableID). A
// row-filtered table is read through a temporary view of pgranger's, and
// the origins must still name the table, as on a direct connection — never
// the view; a masked column is computed and reports none.
func TestResultColumnOriginsNameTheTable(t *testing.T) {
	requireCluster(t)
	c := ctx(t)
	direct, err := pgx.Connect(c, cluster.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(c)
	var orders uint32
	if err := direct.QueryRow(c, "SELECT 'sales.orders'::regclass::oid").Scan(&orders); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT o.id, o.ssn, o.customer, 1 AS one FROM sales.orders o WHERE o.id = 1"
	origins := func(conn *pgx.Conn, mode pgx.QueryExecMode) string {
		rs, err := conn.Query(c, q, mode)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		defer rs.Close()
		var out string
		for _, f := range rs.FieldDescriptions() {
			out += fmt.Sprintf("%s=%d.%d ", f.Name, f.TableOID, f.TableAttributeNumber)
		}
		for rs.Next() {
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got, want := origins(direct, pgx.QueryExecModeSimpleProtocol), fmt.Sprintf("id=%d.1 ssn=%d.3 customer=%d.2 one=0.0 ", orders, orders, orders); got != want {
		t.Fatalf("direct origins %q, want %q", got, want)
	}
	// bob: region filter (the view) and an ssn mask. Each mode on a new
	// session, so the view is created in the same round trip.
	want := fmt.Sprintf("id=%d.1 ssn=0.0 customer=%d.2 one=0.0 ", orders, orders)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec} {
		conn := connect(t, demoProxy, "bob")
		for i := 0; i < 2; i++ {
			if got := origins(conn, mode); got != want {
				t.Errorf("%v (run %d): origins %q, want %q", mode, i+1, got, want)
			}
		}
	}
	// After a rollback drops the view, it is created again, with a new
	// OID, and still reported as the table.
	conn := connect(t, demoProxy, "bob")
	simple := pgx.QueryExecModeSimpleProtocol
	rows(t, conn, "BEGIN", simple)
	if got := origins(conn, simple); got != want {
		t.Errorf("in a transaction: origins %q, want %q", got, want)
	}
	rows(t, conn, "ROLLBACK", simple)
	if got := origins(conn, simple); got != want {
		t.Errorf("after rollback: origins %q, want %q", got, want)
	}
}
