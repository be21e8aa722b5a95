package e2e

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Every pgx execution mode (statement cache, describe cache, describe+exec,
// exec with the unnamed statement, simple protocol) returns the same
// masked, filtered rows, with parameters.
func TestPgxExecModes(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	want := []string{"3|xxx-xx-3333", "5|xxx-xx-5555"}
	for _, mode := range []pgx.QueryExecMode{
		pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec,
		pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol,
	} {
		got, err := tryRows(conn, "SELECT id, ssn FROM sales.orders WHERE id > $1 ORDER BY id", mode, 1)
		if err != nil {
			t.Errorf("%v: %v", mode, err)
			continue
		}
		equalLines(t, mode.String(), got, want)
	}
	// Typed scanning through the extended protocol (binary results).
	var id int32
	var ssn string
	if err := conn.QueryRow(context.Background(), "SELECT id, ssn FROM sales.orders WHERE id = $1", 5).Scan(&id, &ssn); err != nil || id != 5 || ssn != "xxx-xx-5555" {
		t.Errorf("scan: %d %q %v", id, ssn, err)
	}
}

// A pgx batch prepares every statement first (Parse/Describe, one Sync).
// pgranger reports a denial at Parse — PostgreSQL reports permission
// errors later, at execution (docs/limits.md) — so the batch fails with
// 42501 as a whole, nothing of it runs, and the connection stays usable.
func TestPgxBatchWithDenial(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	ctx := context.Background()
	b := &pgx.Batch{}
	b.Queue("SELECT ssn FROM sales.orders WHERE id = 1")
	b.Queue("SELECT salary FROM hr.employees")
	b.Queue("SELECT 2")
	br := conn.SendBatch(ctx, b)
	var ssn string
	if err := br.QueryRow().Scan(&ssn); sqlstate(err) != "42501" {
		t.Errorf("want the batch to fail with 42501, got %q %v", ssn, err)
	}
	br.Close()
	equalLines(t, "after batch", rows(t, conn, "SELECT 3"), []string{"3"})

	// A batch of allowed statements runs as one pipeline.
	b = &pgx.Batch{}
	b.Queue("SELECT ssn FROM sales.orders WHERE id = $1", 1)
	b.Queue("SELECT ssn FROM sales.orders WHERE id = $1", 3)
	br = conn.SendBatch(ctx, b)
	for _, want := range []string{"xxx-xx-1111", "xxx-xx-3333"} {
		if err := br.QueryRow().Scan(&ssn); err != nil || ssn != want {
			t.Errorf("batch: %q %v, want %q", ssn, err, want)
		}
	}
	if err := br.Close(); err != nil {
		t.Error(err)
	}
}
