package e2e

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

// pgranger resolves names with the search_path the backend has: a SET
// counts once sent, and is taken back exactly when PostgreSQL takes it
// back — a rolled-back transaction block, a failed implicit transaction.
func TestSearchPathFollowsTransactions(t *testing.T) {
	t.Parallel() // its own proxy and session
	conn := connect(t, startProxy(t, proxyOptions{}), "bob")
	simple := pgx.QueryExecModeSimpleProtocol
	const q = "SELECT ssn FROM orders WHERE id = 1"
	noOrders := func(what string) {
		t.Helper()
		if _, err := tryRows(conn, q, simple); sqlstate(err) != "42P01" {
			t.Errorf("%s: err = %v, want 42P01 (orders is not on the path)", what, err)
		}
	}
	noOrders("default path")

	rows(t, conn, "SET search_path = sales, public", simple)
	equalLines(t, "after SET", rows(t, conn, q, simple), []string{"xxx-xx-1111"})
	rows(t, conn, "RESET search_path", simple)
	noOrders("after RESET")

	rows(t, conn, "BEGIN", simple)
	rows(t, conn, "SET search_path = sales", simple)
	equalLines(t, "inside the block", rows(t, conn, q, simple), []string{"xxx-xx-1111"})
	rows(t, conn, "ROLLBACK", simple)
	noOrders("after ROLLBACK")

	rows(t, conn, "BEGIN", simple)
	rows(t, conn, "SET search_path = sales", simple)
	rows(t, conn, "COMMIT", simple)
	equalLines(t, "after COMMIT", rows(t, conn, q, simple), []string{"xxx-xx-1111"})
	rows(t, conn, "RESET search_path", simple)

	// One string is one implicit transaction: its SET goes with its error.
	if _, err := tryRows(conn, "SET search_path = sales; SELECT 1/0", simple); sqlstate(err) != "22012" {
		t.Fatalf("want division by zero, got %v", err)
	}
	noOrders("after a failed implicit transaction")

	// The extended protocol: the SET counts when executed.
	if _, err := conn.Exec(ctx(t), "SET search_path = sales"); err != nil {
		t.Fatal(err)
	}
	equalLines(t, "extended SET", rows(t, conn, q, simple), []string{"xxx-xx-1111"})
}
