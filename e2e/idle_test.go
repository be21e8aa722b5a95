package e2e

import (
	"testing"
	"time"
)

// Idle timeouts: a silent client is disconnected with PostgreSQL's own
// SQLSTATEs (57P05 outside, 25P03 inside a transaction block); a statement
// that runs longer than the limit is not cut short.
func TestIdleTimeouts(t *testing.T) {
	requireCluster(t)
	p := startProxy(t, proxyOptions{env: map[string]string{
		"PGRANGER_LISTEN__IDLE_TIMEOUT_SECS":                "1",
		"PGRANGER_LISTEN__IDLE_IN_TRANSACTION_TIMEOUT_SECS": "1",
	}})

	busy := connect(t, p, "bob")
	if got := rows(t, busy, "SELECT pg_catalog.pg_sleep(1.5)::text"); len(got) != 1 {
		t.Fatalf("a statement longer than the idle limit: %v", got)
	}
	if got := rows(t, busy, "SELECT 1"); len(got) != 1 || got[0] != "1" {
		t.Fatalf("the session after a long statement: %v", got)
	}

	idle := connect(t, p, "bob")
	time.Sleep(1600 * time.Millisecond)
	if _, err := tryRows(idle, "SELECT 1"); sqlstate(err) != "57P05" {
		t.Errorf("idle session: err = %v, want 57P05", err)
	}

	inTxn := connect(t, p, "bob")
	if _, err := inTxn.Exec(ctx(t), "BEGIN"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1600 * time.Millisecond)
	if _, err := tryRows(inTxn, "SELECT 1"); sqlstate(err) != "25P03" {
		t.Errorf("idle in transaction: err = %v, want 25P03", err)
	}

	// A session that keeps talking stays.
	alive := connect(t, p, "bob")
	for i := 0; i < 4; i++ {
		time.Sleep(500 * time.Millisecond)
		if _, err := tryRows(alive, "SELECT 1"); err != nil {
			t.Fatalf("an active session was ended: %v", err)
		}
	}
}
