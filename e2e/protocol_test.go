package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// The fast-path FunctionCall message would call a function by OID with no
// SQL to check: pgranger never forwards it. It answers as PostgreSQL
// answers a call it refuses — ErrorResponse (42501), ReadyForQuery, an
// open transaction block aborted — and the session goes on, so libpq's
// large-object API or JDBC's LargeObjectManager get an error, not a closed
// connection.
func TestFunctionCallMessageIsRefused(t *testing.T) {
	requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, demoProxy.dsn("bob", "bob"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	call := func(want byte) {
		t.Helper()
		fe := conn.Frontend()
		fe.Send(&pgproto3.FunctionCall{Function: 1299 /* now() */, ResultFormatCode: 0})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		msg, err := fe.Receive()
		if err != nil {
			t.Fatalf("want an ErrorResponse, got %v", err)
		}
		er, ok := msg.(*pgproto3.ErrorResponse)
		if !ok || er.Code != "42501" || er.Severity != "ERROR" || !strings.Contains(er.Message, "fast-path function calls") {
			t.Fatalf("got %#v, want ERROR 42501", msg)
		}
		msg, err = fe.Receive()
		if rfq, ok := msg.(*pgproto3.ReadyForQuery); err != nil || !ok || rfq.TxStatus != want {
			t.Fatalf("got %#v %v, want ReadyForQuery %q", msg, err, want)
		}
	}
	call('I')
	if _, err := conn.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
		t.Fatalf("the session must go on after a refused FunctionCall: %v", err)
	}
	// In a transaction block the refusal aborts it, as an error does.
	if _, err := conn.Exec(ctx, "BEGIN").ReadAll(); err != nil {
		t.Fatal(err)
	}
	call('E')
	if _, err := conn.Exec(ctx, "SELECT 1").ReadAll(); sqlstate(err) != "25P02" {
		t.Errorf("after a refused FunctionCall in a transaction: %v, want 25P02", err)
	}
	if _, err := conn.Exec(ctx, "ROLLBACK").ReadAll(); err != nil {
		t.Fatal(err)
	}
	res, err := conn.Exec(ctx, "SELECT ssn FROM sales.orders WHERE id = 1").ReadAll()
	if err != nil || len(res) != 1 || len(res[0].Rows) != 1 || string(res[0].Rows[0][0]) != "xxx-xx-1111" {
		t.Errorf("after rollback: %v %v", res, err)
	}
}

// Rows and statements larger than the relay's 32 KiB read buffers arrive
// whole through the real proxy, with both protocols: a 300 KB value built
// on bob's masked ssn, and a statement carrying a 200 KB literal.
func TestWideRowsAndLongStatements(t *testing.T) {
	requireCluster(t)
	p := demoProxy
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.dsn("bob", "bob"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	long := strings.Repeat("y", 200000)
	for _, mode := range []any{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		got, err := tryRows(conn, "SELECT ssn || repeat('w', 300000) FROM sales.orders WHERE id = 1", mode)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if want := "xxx-xx-1111" + strings.Repeat("w", 300000); len(got) != 1 || got[0] != want {
			t.Errorf("%v: the wide row came back as %d rows, first %d bytes", mode, len(got), len(strings.Join(got, "")))
		}
		got, err = tryRows(conn, "SELECT ssn FROM sales.orders WHERE id = 1 AND length('"+long+"') = 200000", mode)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if len(got) != 1 || got[0] != "xxx-xx-1111" {
			t.Errorf("%v: the long statement returned %q", mode, got)
		}
	}
}
