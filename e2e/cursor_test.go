package e2e

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

// A cursor's rows come from the rewritten query.
func TestCursor(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	simple := pgx.QueryExecModeSimpleProtocol
	rows(t, conn, "BEGIN", simple)
	rows(t, conn, "DECLARE c CURSOR FOR SELECT id, ssn FROM sales.orders ORDER BY id", simple)
	equalLines(t, "FETCH 2", rows(t, conn, "FETCH 2 FROM c", simple), []string{"1|xxx-xx-1111", "3|xxx-xx-3333"})
	equalLines(t, "FETCH ALL", rows(t, conn, "FETCH ALL FROM c", simple), []string{"5|xxx-xx-5555"})
	rows(t, conn, "CLOSE c", simple)
	rows(t, conn, "COMMIT", simple)
}
