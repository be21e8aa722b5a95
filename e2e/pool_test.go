package e2e

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// With one backend connection, the second client gets the first client's
// connection — reset: session settings and prepared statements are gone,
// and it is the second identity that policies apply to.
func TestBackendConnectionIsResetBeforeReuse(t *testing.T) {
	p := startProxy(t, proxyOptions{env: map[string]string{"PGRANGER_BACKEND__POOL_SIZE": "1"}})
	ctx := context.Background()

	first := connect(t, p, "alice")
	rows(t, first, "SET statement_timeout = '4321s'")
	rows(t, first, "BEGIN")
	equalLines(t, "alice", rows(t, first, "SELECT ssn FROM sales.orders WHERE id = 1"), []string{"111-11-1111"})
	var pid int
	if err := first.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	first.Close(ctx) // leaves with an open transaction

	second := connect(t, p, "bob")
	var pid2 int
	if err := second.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid2); err != nil {
		t.Fatal(err)
	}
	if pid2 != pid {
		t.Fatalf("expected the pooled connection to be reused (pid %d, then %d)", pid, pid2)
	}
	equalLines(t, "reset setting", rows(t, second, "SHOW statement_timeout"), []string{"0"})
	equalLines(t, "no transaction left", rows(t, second, "SELECT now() = statement_timestamp()", pgx.QueryExecModeSimpleProtocol), []string{"t"})
	equalLines(t, "bob's policies", rows(t, second, "SELECT ssn FROM sales.orders WHERE id = 1"), []string{"xxx-xx-1111"})
}
