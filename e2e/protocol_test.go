package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// The fast-path FunctionCall message would call a function by OID with no
// SQL to check: pgranger refuses it and closes the connection (08P01).
func TestFunctionCallMessageIsRefused(t *testing.T) {
	requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, demoProxy.dsn("bob", "bob"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
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
	if !ok || er.Code != "08P01" || er.Severity != "FATAL" {
		t.Fatalf("got %#v, want FATAL 08P01", msg)
	}
}
