package e2e

import (
	"context"
	"testing"
	"time"
)

// A CancelRequest with pgranger's key reaches the right backend query,
// which fails with 57014; the session stays usable.
func TestCancelRequest(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	ctx := context.Background()
	go func() {
		time.Sleep(300 * time.Millisecond)
		conn.PgConn().CancelRequest(context.Background())
	}()
	start := time.Now()
	_, err := conn.Exec(ctx, "SELECT pg_sleep(20)")
	if sqlstate(err) != "57014" || time.Since(start) > 10*time.Second {
		t.Fatalf("err = %v after %v, want 57014 query_canceled", err, time.Since(start))
	}
	equalLines(t, "after cancel", rows(t, conn, "SELECT ssn FROM sales.orders WHERE id = 1"), []string{"xxx-xx-1111"})

	// A cancel with a key pgranger never handed out does nothing.
	other := connect(t, demoProxy, "bob")
	go func() {
		time.Sleep(200 * time.Millisecond)
		other.PgConn().CancelRequest(context.Background()) // cancels other's idle session: a no-op
	}()
	if _, err := conn.Exec(ctx, "SELECT pg_sleep(0.6)"); err != nil {
		t.Errorf("a cancel for another session must not touch this one: %v", err)
	}
}
