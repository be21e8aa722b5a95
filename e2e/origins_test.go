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

// A write through a row filter (policy.dml-row-filter = "apply") goes
// through pgranger's view with CHECK OPTION; the origins of its RETURNING
// columns still name the table, as on a direct connection, and a column
// whose mask is applied in place reports none.
func TestReturningOriginsNameTheTable(t *testing.T) {
	requireCluster(t)
	c := ctx(t)
	// vault.accounts (attack_test.go): for bob a row filter, card masked.
	write := accessPolicy(958, "vault", "*", "*", nil)
	write["policyItems"] = []any{accessItem([]string{"analysts"}, "update")}
	p := startProxy(t, proxyOptions{
		policies: attackPolicies(t, write).bytes(t),
		env:      map[string]string{"PGRANGER_POLICY__DML_ROW_FILTER": "apply"},
	})
	direct, err := pgx.Connect(c, cluster.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(c)
	var accounts uint32
	if err := direct.QueryRow(c, "SELECT 'vault.accounts'::regclass::oid").Scan(&accounts); err != nil {
		t.Fatal(err)
	}
	const q = "UPDATE vault.accounts a SET balance = a.balance WHERE a.id = 1 RETURNING a.id, a.owner, a.card, 1 AS one"
	origins := func(conn *pgx.Conn, mode pgx.QueryExecMode) string {
		tx, err := conn.Begin(c)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(c)
		rs, err := tx.Query(c, q, mode)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		defer rs.Close()
		var out string
		for _, f := range rs.FieldDescriptions() {
			out += fmt.Sprintf("%s=%d.%d ", f.Name, f.TableOID, f.TableAttributeNumber)
		}
		n := 0
		for rs.Next() {
			n++
		}
		if err := rs.Err(); err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if n != 1 {
			t.Fatalf("%v: %d rows updated, want 1", mode, n)
		}
		return out
	}
	if got, want := origins(direct, pgx.QueryExecModeSimpleProtocol), fmt.Sprintf("id=%d.1 owner=%d.2 card=%d.4 one=0.0 ", accounts, accounts, accounts); got != want {
		t.Fatalf("direct origins %q, want %q", got, want)
	}
	// bob: the region filter (the view) and the card mask, applied in place.
	want := fmt.Sprintf("id=%d.1 owner=%d.2 card=0.0 one=0.0 ", accounts, accounts)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec} {
		conn := connect(t, p, "bob")
		for i := 0; i < 2; i++ {
			if got := origins(conn, mode); got != want {
				t.Errorf("%v (run %d): origins %q, want %q", mode, i+1, got, want)
			}
		}
	}
}
