package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The demo policies (examples/policies/hive.json): bob is a US analyst,
// carol EU support, alice compliance (exempt through MASK_NONE items).

func TestBobSeesMaskedUSRows(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	want := []string{
		"1|xxx-xx-1111|1200.50",
		"3|xxx-xx-3333|4410.25",
		"5|xxx-xx-5555|1780.00",
	}
	// Extended protocol (pgx's default) and the simple protocol agree.
	equalLines(t, "extended", rows(t, conn, "SELECT id, ssn, amount FROM sales.orders ORDER BY id"), want)
	equalLines(t, "simple", rows(t, conn, "SELECT id, ssn, amount FROM sales.orders ORDER BY id", pgx.QueryExecModeSimpleProtocol), want)
}

func TestMaskedValuesAreExact(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	got := rows(t, conn, "SELECT email, order_date FROM sales.orders WHERE id = 1")
	// sha256('ada@example.com') and MASK_DATE_SHOW_YEAR of 2024-01-15.
	equalLines(t, "bob email/date", got, []string{"b5fc85e55755f9e0d030a10ab4429b6b2944855f9a0d60077fe832becbc41d72|2024-01-01"})
}

func TestAliceIsExempt(t *testing.T) {
	conn := connect(t, demoProxy, "alice")
	got := rows(t, conn, "SELECT id, ssn, email, amount, region FROM sales.orders ORDER BY id")
	if len(got) != 8 {
		t.Fatalf("alice sees %d rows, want all 8: %v", len(got), got)
	}
	equalLines(t, "alice first rows", got[:2], []string{
		"1|111-11-1111|ada@example.com|1200.50|US",
		"2|222-22-2222|alan@example.com|830.00|EU",
	})
}

func TestCarolSeesEUWithoutAmounts(t *testing.T) {
	conn := connect(t, demoProxy, "carol")
	equalLines(t, "carol", rows(t, conn, "SELECT id, ssn, amount, region FROM sales.orders ORDER BY id"), []string{
		"2|xxx-xx-2222|NULL|EU",
		"4|xxx-xx-4444|NULL|EU",
		"7|xxx-xx-7777|NULL|EU",
	})
	// A masked column keeps its type: amount is still numeric.
	var typ string
	if err := conn.QueryRow(context.Background(), "SELECT pg_typeof(amount)::text FROM sales.orders LIMIT 1").Scan(&typ); err != nil {
		t.Fatal(err)
	}
	if typ != "numeric" {
		t.Errorf("pg_typeof(amount) = %q, want numeric", typ)
	}
}

func TestUserPredicatesSeeMaskedValues(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	// Probing the raw value finds nothing; the masked value matches.
	equalLines(t, "raw probe", rows(t, conn, "SELECT id FROM sales.orders WHERE ssn = '111-11-1111'"), nil)
	equalLines(t, "masked probe", rows(t, conn, "SELECT id FROM sales.orders WHERE ssn = 'xxx-xx-1111'"), []string{"1"})
}

func TestTableDeniedForCarol(t *testing.T) {
	conn := connect(t, demoProxy, "carol")
	_, err := tryRows(conn, "SELECT id FROM hr.employees")
	if sqlstate(err) != "42501" {
		t.Fatalf("carol reading hr.employees: err = %v, want SQLSTATE 42501", err)
	}
	if !strings.Contains(err.Error(), `user "carol"`) || !strings.Contains(err.Error(), "hr.employees") {
		t.Errorf("denial should name the user and the resource: %v", err)
	}
	// The session is still usable.
	equalLines(t, "after denial", rows(t, conn, "SELECT 1"), []string{"1"})
}

func TestColumnDeniedForBob(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	for _, sql := range []string{
		"SELECT salary FROM hr.employees",
		"SELECT * FROM hr.employees",
		"SELECT e FROM hr.employees e",
		"SELECT name FROM hr.employees WHERE salary > 100000",
	} {
		_, err := tryRows(conn, sql)
		if sqlstate(err) != "42501" || !strings.Contains(err.Error(), "hr.employees.salary") {
			t.Errorf("%s: err = %v, want 42501 naming hr.employees.salary", sql, err)
		}
	}
	equalLines(t, "allowed columns", rows(t, conn, "SELECT id, name, email FROM hr.employees ORDER BY id"), []string{
		"1|Margaret Hamilton|*****@example.com",
		"2|Katherine Johnson|*****@example.com",
		"3|Dennis Ritchie|*****@example.com",
	})
	equalLines(t, "count(*) is a table-level read", rows(t, conn, "SELECT count(*) FROM hr.employees"), []string{"3"})
}

func TestQueryShapes(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	cases := []struct {
		sql  string
		want []string
	}{
		{"SELECT o.id, o.ssn FROM sales.orders AS o WHERE o.id < 4 ORDER BY 1", []string{"1|xxx-xx-1111", "3|xxx-xx-3333"}},
		{"SELECT sales.orders.ssn FROM sales.orders WHERE id = 3", []string{"xxx-xx-3333"}},
		{"SELECT * FROM (SELECT ssn FROM sales.orders) s ORDER BY 1", []string{"xxx-xx-1111", "xxx-xx-3333", "xxx-xx-5555"}},
		{"WITH o AS (SELECT id, ssn FROM sales.orders) SELECT ssn FROM o WHERE id = 5", []string{"xxx-xx-5555"}},
		{"SELECT ssn FROM sales.orders WHERE id = 1 UNION ALL SELECT ssn FROM sales.orders WHERE id = 3", []string{"xxx-xx-1111", "xxx-xx-3333"}},
		{"SELECT (SELECT count(*) FROM sales.orders)", []string{"3"}},
		{"SELECT a.ssn FROM sales.orders a JOIN sales.orders b USING (id) WHERE b.id = 1", []string{"xxx-xx-1111"}},
		{"SELECT x.a, x.b FROM sales.orders AS x(a, b) WHERE x.a = 5", []string{"5|Barbara Liskov"}},
		{"SELECT row_to_json(o)->>'ssn' FROM sales.orders o WHERE id = 1", []string{"xxx-xx-1111"}},
		{"SELECT id FROM sales.orders WHERE EXISTS (SELECT 1 FROM sales.orders i WHERE i.id = 2)", nil},
		{"SET search_path = sales, public", nil},
		{"SELECT ssn FROM orders WHERE id = 1", []string{"xxx-xx-1111"}},
		{"SELECT current_user, session_user", []string{"bob|bob"}},
	}
	for _, c := range cases {
		got, err := tryRows(conn, c.sql, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		equalLines(t, c.sql, got, c.want)
	}
}

func TestDenialsBySQLSTATE(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	cases := []struct{ sql, code, contains string }{
		{"INSERT INTO sales.orders_plain VALUES (2, 'x')", "42501", "INSERT"},
		{"DELETE FROM sales.orders", "42501", "DELETE"},
		{"CREATE TABLE t (a int)", "42501", "CREATE TABLE"},
		{"DO $$ BEGIN END $$", "42501", "DO"},
		{"SET ROLE postgres", "42501", "role"},
		{"SET client_encoding = 'LATIN1'", "42501", "client_encoding"},
		{"SELECT query_to_xml('SELECT * FROM sales.orders', true, true, '')", "42501", "query_to_xml"},
		{"SELECT * FROM pg_stats", "42501", "pg_stats"},
		{"SELECT 1; SELECT salary FROM hr.employees", "42501", "salary"},
		{"SELEC 1", "42601", "syntax error"},
		{"SELECT * FROM no_such_table", "42P01", "no_such_table"},
		{"SELECT * FROM other.ungoverned", "42501", "other.ungoverned"},
	}
	for _, c := range cases {
		_, err := tryRows(conn, c.sql, pgx.QueryExecModeSimpleProtocol)
		if sqlstate(err) != c.code || !strings.Contains(err.Error(), c.contains) {
			t.Errorf("%s: err = %v, want SQLSTATE %s mentioning %q", c.sql, err, c.code, c.contains)
		}
	}
}

func TestDeniedStatementAbortsTransaction(t *testing.T) {
	conn := connect(t, demoProxy, "carol")
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tryRows(conn, "SELECT id FROM hr.employees"); sqlstate(err) != "42501" {
		t.Fatalf("want 42501, got %v", err)
	}
	// As after any error in PostgreSQL, the transaction is aborted.
	if _, err := tryRows(conn, "SELECT 1"); sqlstate(err) != "25P02" {
		t.Fatalf("after a denial inside a transaction: err = %v, want 25P02", err)
	}
	tx.Rollback(ctx)
	equalLines(t, "after rollback", rows(t, conn, "SELECT 1"), []string{"1"})
}

func TestWrongPassword(t *testing.T) {
	requireCluster(t)
	for _, dsn := range []string{demoProxy.dsn("bob", "nope"), demoProxy.dsn("mallory", "x")} {
		_, err := pgx.Connect(context.Background(), dsn)
		if sqlstate(err) != "28P01" {
			t.Errorf("connect %s: err = %v, want 28P01", dsn, err)
		}
	}
}
