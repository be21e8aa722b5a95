package e2e

import (
	"sync"
	"testing"
	"time"
)

// Idle timeouts: a silent client is disconnected with PostgreSQL's own
// SQLSTATEs (57P05 outside, 25P03 inside a transaction block); a statement
// that runs longer than the limit is not cut short. The limits are the
// smallest the configuration allows (1 s), and the four sessions wait side
// by side, so the test waits about as long as one of them.
func TestIdleTimeouts(t *testing.T) {
	t.Parallel() // its own proxy; mostly waits for the timeouts
	requireCluster(t)
	p := startProxy(t, proxyOptions{env: map[string]string{
		"PGRANGER_LISTEN__IDLE_TIMEOUT_SECS":                "1",
		"PGRANGER_LISTEN__IDLE_IN_TRANSACTION_TIMEOUT_SECS": "1",
	}})

	busy := connect(t, p, "bob")
	idle := connect(t, p, "bob")
	inTxn := connect(t, p, "bob")
	alive := connect(t, p, "bob")
	if _, err := inTxn.Exec(ctx(t), "BEGIN"); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if got, err := tryRows(busy, "SELECT pg_catalog.pg_sleep(1.5)::text"); err != nil || len(got) != 1 {
			t.Errorf("a statement longer than the idle limit: %v %v", got, err)
			return
		}
		if got, err := tryRows(busy, "SELECT 1"); err != nil || len(got) != 1 || got[0] != "1" {
			t.Errorf("the session after a long statement: %v %v", got, err)
		}
	}()
	// A session that keeps talking stays.
	go func() {
		defer wg.Done()
		for i := 0; i < 4; i++ {
			time.Sleep(450 * time.Millisecond)
			if _, err := tryRows(alive, "SELECT 1"); err != nil {
				t.Errorf("an active session was ended: %v", err)
				return
			}
		}
	}()
	time.Sleep(1600 * time.Millisecond)
	if _, err := tryRows(idle, "SELECT 1"); sqlstate(err) != "57P05" {
		t.Errorf("idle session: err = %v, want 57P05", err)
	}
	if _, err := tryRows(inTxn, "SELECT 1"); sqlstate(err) != "25P03" {
		t.Errorf("idle in transaction: err = %v, want 25P03", err)
	}
	wg.Wait()
}
