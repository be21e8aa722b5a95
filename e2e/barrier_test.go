package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// A row filter must not be an error oracle: a user predicate that raises an
// error on a filtered-out row (division by zero on hr.employees id 2, which
// this filter hides) must never be evaluated on that row.
func TestRowFilterIsASecurityBarrier(t *testing.T) {
	const filter = "pg_catalog.lower(pg_catalog.upper(pg_catalog.lower(department))) <> 'research'"
	const probe = "SELECT id FROM hr.employees WHERE 1/(id - 2) <> 0 ORDER BY id"
	ctx := context.Background()

	// Direct, as a plain subquery: PostgreSQL flattens it and evaluates the
	// cheaper user predicate first — the oracle the barrier exists for.
	direct, err := pgx.Connect(ctx, cluster.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(ctx)
	_, err = tryRows(direct, "SELECT id FROM (SELECT * FROM hr.employees WHERE "+filter+") e WHERE 1/(id - 2) <> 0", pgx.QueryExecModeSimpleProtocol)
	if sqlstate(err) != "22012" {
		t.Fatalf("fixture no longer demonstrates the oracle with a plain subquery (err = %v)", err)
	}

	doc := demoPolicies(t)
	doc.add(rowFilterPolicy(905, "hr", "employees", []string{"analysts"}, filter))
	p := startProxy(t, proxyOptions{policies: doc.bytes(t)})
	conn := connect(t, p, "bob")
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		got, err := tryRows(conn, probe, mode)
		if err != nil {
			t.Fatalf("%v: the user predicate ran on a filtered-out row: %v", mode, err)
		}
		equalLines(t, mode.String(), got, []string{"1", "3"})
	}
	// Inside a transaction, after a rollback (which drops views the
	// transaction created), and in a new transaction the view is there.
	rows(t, conn, "BEGIN", pgx.QueryExecModeSimpleProtocol)
	equalLines(t, "in a transaction", rows(t, conn, "SELECT count(*) FROM hr.employees", pgx.QueryExecModeSimpleProtocol), []string{"2"})
	rows(t, conn, "ROLLBACK", pgx.QueryExecModeSimpleProtocol)
	equalLines(t, "after rollback", rows(t, conn, "SELECT count(*) FROM hr.employees", pgx.QueryExecModeSimpleProtocol), []string{"2"})
	equalLines(t, "prepared after rollback", rows(t, conn, probe), []string{"1", "3"})

	// A fresh connection whose first view is created inside a transaction
	// that rolls back, then a prepared statement reused after it.
	c2 := connect(t, p, "bob")
	rows(t, c2, "BEGIN", pgx.QueryExecModeSimpleProtocol)
	equalLines(t, "first use in a transaction", rows(t, c2, probe), []string{"1", "3"})
	rows(t, c2, "ROLLBACK", pgx.QueryExecModeSimpleProtocol)
	equalLines(t, "same prepared statement after rollback", rows(t, c2, probe), []string{"1", "3"})
}

// Point lookups through the barrier still use the primary key: an equality
// on id is leakproof, so PostgreSQL may evaluate it below the filter.
func TestBarrierKeepsIndexScan(t *testing.T) {
	requireCluster(t)
	ctx := context.Background()
	direct, err := pgx.Connect(ctx, cluster.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(ctx)
	tx, err := direct.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off;
		CREATE VIEW pg_temp.v WITH (security_barrier = true) AS SELECT * FROM sales.orders WHERE region = 'US'`); err != nil {
		t.Fatal(err)
	}
	var plan string
	if err := tx.QueryRow(ctx, "EXPLAIN (COSTS OFF) SELECT * FROM pg_temp.v WHERE id = 3").Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if plan != "Index Scan using orders_pkey on orders" {
		t.Errorf("plan = %q, want an index scan", plan)
	}
}

// A read-only transaction cannot create the temporary view: the user gets
// one error that says why, and the session recovers after ROLLBACK.
func TestBarrierInReadOnlyTransaction(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	rows(t, conn, "BEGIN READ ONLY", pgx.QueryExecModeSimpleProtocol)
	_, err := tryRows(conn, "SELECT ssn FROM sales.orders WHERE id = 1", pgx.QueryExecModeSimpleProtocol)
	if sqlstate(err) != "25006" || !strings.Contains(err.Error(), "security-barrier view") {
		t.Errorf("err = %v, want 25006 explaining the view", err)
	}
	rows(t, conn, "ROLLBACK", pgx.QueryExecModeSimpleProtocol)
	// The extended protocol, in a fresh read-only transaction.
	rows(t, conn, "BEGIN READ ONLY", pgx.QueryExecModeSimpleProtocol)
	_, err = tryRows(conn, "SELECT ssn FROM sales.orders WHERE id = $1", 1)
	if sqlstate(err) != "25006" || !strings.Contains(err.Error(), "security-barrier view") {
		t.Errorf("extended: err = %v, want 25006 explaining the view", err)
	}
	rows(t, conn, "ROLLBACK", pgx.QueryExecModeSimpleProtocol)
	equalLines(t, "after rollback", rows(t, conn, "SELECT ssn FROM sales.orders WHERE id = 1", pgx.QueryExecModeSimpleProtocol), []string{"xxx-xx-1111"})
	equalLines(t, "extended after rollback", rows(t, conn, "SELECT ssn FROM sales.orders WHERE id = $1", 1), []string{"xxx-xx-1111"})
}
